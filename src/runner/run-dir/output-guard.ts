/**
 * The guard around every write of rhema's own output and state (run directory, report copies):
 * a file-system failure becomes an `OutputError` naming the file rhema meant to write and what
 * it was doing, so the user reads "cannot write /x/junit.xml: no space left on device (ENOSPC)"
 * and exit 3 — never an internal error, never a nameless errno. Anything that is not a
 * file-system failure (a bug) passes through untouched.
 */
import { OutputError, errnoCode, isMachineErrno, type OutputOperation } from "../../core/errors.js";

/** `err` as an OutputError about `path` when it is a file-system failure; otherwise `err` itself. */
export function asOutputError(err: unknown, path: string, operation: OutputOperation): unknown {
  if (err instanceof OutputError) return err;
  const errno = errnoCode(err);
  return errno === null ? err : new OutputError(path, operation, errno, { cause: err });
}

/** Runs `write`; a file-system failure is rethrown as an OutputError about `path`. */
export async function guardOutput<T>(path: string, operation: OutputOperation, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    throw asOutputError(err, path, operation);
  }
}

/**
 * For reads of rhema's own files: a failure that is the machine's (no permission, no file
 * handles, an I/O error) as an OutputError; null for one that says the file itself is wrong
 * (a folder where a file should be, …), which the reader reports as an invalid file instead.
 */
export function machineReadError(err: unknown, path: string): OutputError | null {
  const errno = errnoCode(err);
  return errno !== null && isMachineErrno(errno) ? new OutputError(path, "read", errno, { cause: err }) : null;
}
