/**
 * The built CLI run as another user — nobody, or any uid (setpriv) — when the tests run as root;
 * as the test's own user otherwise. The checkout may lie under a
 * folder others cannot enter (a clone in a 0700 temp folder, as .ci/run makes), so root binds it
 * at a 0755 place first and runs the CLI from there; the bind goes when the run ends.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { lstatSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { CLI, cliEnv, type CliResult } from "./cli.js";
import { tempDir } from "./temp-dir.js";

export const ROOT = process.getuid?.() === 0;
const REPO = resolve(CLI, "../../../..");

/** Why nobody cannot run this checkout's CLI from a bind (a node_modules linked out of it: .ci/run's other-Node clones), or false. */
export const LINKED_MODULES: string | false = ROOT && lstatSync(join(REPO, "node_modules"), { throwIfNoEntry: false })?.isSymbolicLink() === true
  && `${join(REPO, "node_modules")} is a link out of the checkout (.ci/run's other-Node clones), which a bind of the checkout does not carry to nobody; the Node 20 phase runs this test`;

/** A user the CLI is run as: its uid and gid (neither needs a name in /etc/passwd). */
export interface TestUser {
  uid: number;
  gid: number;
}
export const NOBODY: TestUser = { uid: 65534, gid: 65534 };

/**
 * Starts the CLI with `args` in `cwd` as `user` (when the tests run as root: through setpriv, from
 * a bind of the checkout) or as the test's own user; `env` laid over the test's. `detached`: the
 * CLI leads a process group of its own. The bind goes when the CLI has ended.
 */
export async function startCliAs(
  t: { after(fn: () => unknown): void }, user: TestUser, args: string[], opts: { cwd: string; env?: Record<string, string>; detached?: boolean },
): Promise<{ child: ChildProcess; done: Promise<CliResult> }> {
  const env = cliEnv(opts.env ?? {});
  let command = [process.execPath, CLI, ...args];
  let bound: string | null = null;
  if (ROOT) {
    const place = await tempDir(t, "rhema-nobody-");
    await chmod(place, 0o755);
    bound = join(place, "rhema");
    await mkdir(bound);
    execFileSync("mount", ["--bind", REPO, bound]);
    command = ["setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--", process.execPath, join(bound, relative(REPO, CLI)), ...args];
  }
  const unbind = () => {
    if (bound !== null) execFileSync("umount", [bound]);
  };
  let child: ChildProcess;
  try {
    child = spawn(command[0]!, command.slice(1), { cwd: opts.cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: opts.detached ?? false });
  } catch (err) {
    unbind();
    throw err;
  }
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<CliResult>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))).finally(unbind);
  return { child, done };
}

/** Runs the CLI with `args` in `cwd` as nobody (root) or as the user, `env` laid over the test's. */
export async function runCliAsNobody(t: { after(fn: () => unknown): void }, args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  return (await startCliAs(t, NOBODY, args, opts)).done;
}
