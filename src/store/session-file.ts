/**
 * The session file: pretty JSON, 0600, written atomically; read back validated (a version-1
 * file upgraded, its call states inferred). A torn, foreign or future file is a
 * `SessionFileError` naming the file, never a crash.
 */
import { readFile } from "node:fs/promises";
import { SessionFileError } from "../core/errors.js";
import type { Session } from "../core/session.js";
import { parseSession } from "../core/session-v1.js";
import { writePrivateJson } from "./private-files.js";

/** Pretty JSON, 0600, temp + fsync + rename. */
export async function saveSession(session: Session, path: string): Promise<void> {
  await writePrivateJson(path, session);
}

export async function loadSession(path: string): Promise<Session> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SessionFileError(path, code === "ENOENT" ? "no such file" : `cannot read: ${code ?? String(err)}`, { cause: err });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const detail = text.trim() === "" ? "the file is empty" : `not JSON (truncated or corrupt): ${(err as Error).message}`;
    throw new SessionFileError(path, detail, { cause: err });
  }
  return parseSession(value, path);
}
