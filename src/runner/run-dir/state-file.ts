/**
 * Reading and writing the runner's small JSON state files (manifest.json, task-state.json):
 * absent is null; anything else must parse and validate, or it is a `StateFileError` with the
 * file's own code naming the file and what to do. A read the machine refuses (permissions,
 * file handles) and every failed write are `OutputError`s (exit 3).
 */
import { readFile } from "node:fs/promises";
import type { z } from "zod";
import { RhemaError, errnoCode, errorMessage } from "../../core/errors.js";
import { writePrivateJson, type Durability } from "../../store/private-files.js";
import { guardOutput, machineReadError } from "./output-guard.js";

export interface StateFileKind<T> {
  schema: z.ZodType<T>;
  code: "manifest_invalid" | "state_invalid";
  /** What the file should be, for the message: "a rhema run manifest". */
  what: string;
  /** The way out: "pass another --out or remove the folder". */
  remedy: string;
}

/** A state file that cannot be trusted: names the file, what is wrong with it and the way out. */
export class StateFileError extends RhemaError {
  readonly path: string;
  constructor(path: string, code: StateFileKind<unknown>["code"], message: string, options?: { cause?: unknown }) {
    super(code, `${path}: ${message}`, options);
    this.path = path;
  }
}

export async function readStateFile<T>(path: string, kind: StateFileKind<T>): Promise<T | null> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw machineReadError(err, path) ?? new StateFileError(path, kind.code, `cannot read (${errorMessage(err)}); ${kind.remedy}`, { cause: err });
  }
  const parsed = parseJsonText(text);
  const checked = parsed.ok ? kind.schema.safeParse(parsed.value) : null;
  if (checked?.success) return checked.data;
  const why = checked ? firstIssue(checked.error) : `not JSON: ${parsed.ok ? "" : parsed.error}`;
  throw new StateFileError(path, kind.code, `not ${kind.what} (${why}); ${kind.remedy}`);
}

/** Writes the state atomically, 0600; a failure is an OutputError naming the file. */
export async function writeStateFile(path: string, value: unknown, durability: Durability = "full"): Promise<void> {
  await guardOutput(path, "write", () => writePrivateJson(path, value, durability));
}

/** JSON text parsed, or why it is not JSON: the one place state text is parsed. */
export function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (text.trim() === "") return { ok: false, error: "the file is empty" };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: errorMessage(err) };
  }
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue ? `${issue.path.length > 0 ? issue.path.join(".") : "(root)"}: ${issue.message}` : "invalid";
}
