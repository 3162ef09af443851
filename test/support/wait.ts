/** Polling helpers for tests that wait on real processes and files. */
import { access } from "node:fs/promises";

/** Polls `check` every `everyMs` until it holds; throws "timed out waiting" once past `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000, everyMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Whether `path` exists (anything `access` can see). */
export function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}
