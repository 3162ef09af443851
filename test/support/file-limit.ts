/**
 * The machine's file-handle limit met for real: a Node child runs an ES module's text under
 * `ulimit -n LIMIT` (bash sets it, then becomes node), and can take every handle left.
 */
import { spawnSync } from "node:child_process";

/**
 * Module text that takes every file handle left into `held` (opening /dev/null until EMFILE);
 * the script imports `openSync` (and `closeSync` to give them back).
 */
export const TAKE_EVERY_HANDLE = `const held = []; try { for (;;) held.push(openSync("/dev/null", "r")); } catch (err) { if (err.code !== "EMFILE") throw err; }`;

/** Runs `script` (an ES module's text) in a Node child under `ulimit -n limit`; its exit status and output. */
export function nodeUnderFileLimit(limit: number, script: string): { status: number | null; stdout: string; stderr: string } {
  const child = spawnSync("bash", ["-c", `ulimit -n ${limit} && exec "$@"`, "bash", process.execPath, "--input-type=module", "-e", script], { encoding: "utf8", timeout: 60_000 });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}
