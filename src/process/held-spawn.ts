/**
 * Spawning a command *held*: its process group exists (the pgid and the leader's start time are
 * known, so a checkpoint can record them) but it runs nothing until released. A small `/bin/sh`
 * waits for one line on an extra pipe (fd 3); on `release()` it closes the pipe and `exec`s the
 * real command in the same process. The holder leads the group itself (same pid, same start time
 * as the command after exec), or runs inside a wrapper such as bwrap that leads it. If this
 * process dies first, the pipe closes and the holder exits without running anything.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Writable } from "node:stream";
import { type ProcessGroupIdentity, thisHost } from "./process-identity.js";
import { processStartTime } from "./process-table.js";

/** Waits for "go" on fd 3; end of file (the spawner died, or `kill`) runs nothing. */
const HOLD_SCRIPT = 'IFS= read -r go <&3 && [ "$go" = go ] || exit 125; exec 3<&-; exec "$@"';

export interface HeldSpawnRequest {
  /** The command, program first; the program is looked up on `env.PATH` like `exec` does. */
  argv: readonly string[];
  cwd: string;
  /** The environment of the spawned program (the holder's, or the wrapper's). */
  env: Readonly<Record<string, string>>;
  /**
   * Runs the holder (an argv) inside another program, e.g. the sandbox: `(holder) => bwrapArgv(spec,
   * holder)`. The wrapper leads the group and must pass fd 3 on to the holder. Default: none.
   */
  wrap?: (holder: string[]) => string[];
}

export interface HeldProcess extends ProcessGroupIdentity {
  /** The group's leader (the holder, or its wrapper): stdin is /dev/null, stdout and stderr are pipes. */
  child: ChildProcess;
  /** Runs the command. Once only; later calls do nothing. */
  release(): void;
  /** Kills the held group (nothing ran) and waits for the leader to exit. */
  discard(): Promise<void>;
}

/** Spawns `argv` held in a process group of its own (see the module comment). Rejects when the program cannot start. */
export async function spawnHeld(req: HeldSpawnRequest): Promise<HeldProcess> {
  if (req.argv.length === 0) throw new Error("spawnHeld: argv is empty");
  const holder = ["/bin/sh", "-c", HOLD_SCRIPT, "rhema-held", ...req.argv];
  const [program, ...args] = req.wrap ? req.wrap(holder) : holder;
  const child = spawn(program!, args, { cwd: req.cwd, env: req.env, detached: true, stdio: ["ignore", "pipe", "pipe", "pipe"] });
  await new Promise<void>((resolveSpawn, reject) => {
    child.once("spawn", resolveSpawn);
    child.once("error", reject);
  });
  const hold = child.stdio[3] as Writable;
  hold.on("error", () => {}); // EPIPE when the holder died first: its exit tells the rest
  const pgid = child.pid!;
  const exited = new Promise<void>((r) => {
    if (child.exitCode !== null || child.signalCode !== null) r();
    else child.once("exit", () => r());
  });
  let released = false;
  return {
    host: thisHost(), pgid, startTime: (await processStartTime(pgid)) ?? 0, child,
    release() {
      if (released) return;
      released = true;
      hold.end("go\n");
    },
    async discard() {
      released = true;
      try {
        process.kill(-pgid, "SIGKILL");
      } catch {
        // already gone
      }
      hold.destroy();
      await exited;
    },
  };
}
