/** Shared by the sandbox tests: whether bwrap works here (else the tests skip, saying why), a run directory, the stand-in driver. */
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { DEFAULT_SEARCH_PATH, findOnPath, probeSandbox } from "../../src/process/sandbox-probe.js";
import { compiled } from "../support/paths.js";
import { liveRunProcesses } from "../support/run-processes.js";

/**
 * false when the sandbox works here; else the reason, for `test(…, { skip })`. With
 * RHEMA_REQUIRE_SANDBOX=1 (CI, after scripts/ci-install-bwrap.sh) an unavailable sandbox fails instead.
 */
export async function sandboxSkip(): Promise<false | string> {
  const probe = await probeSandbox();
  if (probe.ok) return false;
  if (process.env.RHEMA_REQUIRE_SANDBOX === "1") throw new Error(`sandbox required but unavailable: ${probe.reason}; ${probe.fix}`);
  return `no sandbox here: ${probe.reason}`;
}

/** A temp folder outside /tmp (which the sandbox covers with its own), removed after the test. */
export async function hostDir(t: TestContext | { after(fn: () => unknown): void }, prefix = "rhema-sbx-"): Promise<string> {
  const dir = await realpath(await mkdtemp(join("/var/tmp", prefix)));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** RUN/tasks/suite/{a,b}/{workspace/, session.json}: two tasks of one run directory. */
export async function runDirWithTwoTasks(root: string): Promise<{ run: string; workspaceA: string; sessionA: string; sessionB: string }> {
  const run = join(root, "run");
  for (const id of ["a", "b"]) {
    await mkdir(join(run, "tasks", "suite", id, "default", "1", "workspace"), { recursive: true });
    await writeFile(join(run, "tasks", "suite", id, "default", "1", "session.json"), `{"secret":"session of ${id}"}\n`);
  }
  await writeFile(join(run, "manifest.json"), "{}\n");
  return {
    run, workspaceA: join(run, "tasks", "suite", "a", "default", "1", "workspace"),
    sessionA: join(run, "tasks", "suite", "a", "default", "1", "session.json"), sessionB: join(run, "tasks", "suite", "b", "default", "1", "session.json"),
  };
}

export interface DriverRequest { workspace: string; command: string; env: Record<string, string>; sandbox?: unknown }

/** Starts the stand-in (test/process/shell-driver.ts) in a process group of its own, with `callerEnv` as its environment. */
export function startDriver(req: DriverRequest, callerEnv: Record<string, string>) {
  return spawn(process.execPath, [compiled("test/process/shell-driver.js"), JSON.stringify(req)], {
    env: callerEnv, detached: true, stdio: ["ignore", "pipe", "inherit"],
  });
}

/** Runs the stand-in to the end; its stdout lines. */
export async function runDriver(req: DriverRequest, callerEnv: Record<string, string>): Promise<{ started: string; result: { content: string; isError?: boolean } }> {
  const child = startDriver(req, callerEnv);
  let out = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((r) => child.once("close", (c) => r(c)));
  const lines = out.trim().split("\n");
  if (code !== 0 || lines.length !== 2) throw new Error(`driver exited ${code}: ${out}`);
  return { started: lines[0]!, result: JSON.parse(lines[1]!) };
}

/** Processes (not zombies) whose command line or environment carries `mark`: "pid cmdline" each. */
export async function processesMarked(mark: string): Promise<string[]> {
  return (await liveRunProcesses({ mark })).map((p) => `${p.pid} ${p.cmdline}`);
}

/**
 * A folder holding a `bwrap` that runs the real one, but refuses a user namespace as a container
 * without them does (`refuseUserns`), and/or ignores `--cap-drop` (`dropCapDrop`: the command
 * keeps root's capabilities).
 */
export async function wrappedBwrap(dir: string, refuseUserns: boolean, dropCapDrop: boolean): Promise<string> {
  const real = await findOnPath("bwrap", DEFAULT_SEARCH_PATH);
  await writeFile(join(dir, "bwrap"), `#!/bin/bash
[ "$1" = --version ] && exec ${real} --version
args=()
for a in "$@"; do
  ${refuseUserns ? '[ "$a" = --unshare-user ] && { echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2; exit 1; }' : ":"}
  args+=("$a")
done
${dropCapDrop ? 'for i in "${!args[@]}"; do [ "${args[$i]}" = --cap-drop ] && unset "args[$i]" "args[$((i+1))]"; done' : ""}
exec ${real} "\${args[@]}"
`);
  await chmod(join(dir, "bwrap"), 0o755);
  return dir;
}
