/**
 * Reading the runner's small state files (manifest.json, task-state.json): absent is null,
 * anything else must validate, or it is a clear error naming the file and what to do.
 */
import { readFile } from "node:fs/promises";
import type { z } from "zod";
import { RhemaError } from "../../core/errors.js";

export async function readStateFile<T>(path: string, schema: z.ZodType<T>, what: string, remedy: string): Promise<T | null> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  try {
    return schema.parse(JSON.parse(text));
  } catch (err) {
    throw new RhemaError("session_invalid", `${path}: not ${what} (${(err as Error).message.split("\n")[0]}); ${remedy}`);
  }
}
