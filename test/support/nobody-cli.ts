/**
 * The built CLI run as nobody (setpriv) when the tests run as root. The checkout may lie under a
 * folder others cannot enter (a clone in a 0700 temp folder, as .ci/run makes), so root binds it
 * at a 0755 place first and runs the CLI from there; the bind goes when the run ends.
 */
import { execFileSync, spawn } from "node:child_process";
import { lstatSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { CLI, cliEnv, type CliResult } from "./cli.js";
import { tempDir } from "./temp-dir.js";

export const ROOT = process.getuid?.() === 0;
export const AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"];
const REPO = resolve(CLI, "../../../..");

/** Why nobody cannot run this checkout's CLI from a bind (a node_modules linked out of it: .ci/run's other-Node clones), or false. */
export const LINKED_MODULES: string | false = ROOT && lstatSync(join(REPO, "node_modules"), { throwIfNoEntry: false })?.isSymbolicLink() === true
  && `${join(REPO, "node_modules")} is a link out of the checkout (.ci/run's other-Node clones), which a bind of the checkout does not carry to nobody; the Node 20 phase runs this test`;

/** Runs the CLI with `args` in `cwd` as nobody (root) or as the user, `env` laid over the test's. */
export async function runCliAsNobody(t: { after(fn: () => unknown): void }, args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  const env = cliEnv(opts.env ?? {});
  let command = [process.execPath, CLI, ...args];
  let bound: string | null = null;
  if (ROOT) {
    const place = await tempDir(t, "rhema-nobody-");
    await chmod(place, 0o755);
    bound = join(place, "rhema");
    await mkdir(bound);
    execFileSync("mount", ["--bind", REPO, bound]);
    command = [...AS_NOBODY, process.execPath, join(bound, relative(REPO, CLI)), ...args];
  }
  try {
    const child = spawn(command[0]!, command.slice(1), { cwd: opts.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    return await new Promise<CliResult>((done) => child.on("close", (code, signal) => done({ code, signal, stdout, stderr })));
  } finally {
    if (bound !== null) execFileSync("umount", [bound]);
  }
}
