/**
 * Spawning a command *held*: its process group exists (the pgid and the leader's start time are
 * known, so a checkpoint can record them) but it runs nothing until released. A small `/bin/sh`
 * waits for one line on an extra pipe (fd 3); on `release()` it closes the pipe and `exec`s the
 * real command in the same process. The holder leads the group itself (same pid, same start time
 * as the command after exec), or runs inside a wrapper such as bwrap or the reaper (subreaper.ts)
 * that leads it. If this process dies first, the pipe closes and the holder exits without running
 * anything.
 *
 * The pipe is also the control channel back: the holder writes "r" as soon as it runs, so a
 * wrapper that exits before the holder ever ran (bwrap refusing a mount) is told apart from a
 * command that failed; a wrapper may write "s" when it stopped processes the command left behind.
 * The leader's `exit` and `close` are listened for from the moment it is spawned: an exit during
 * any later await (the caller's checkpoint) is never missed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Duplex } from "node:stream";
import type { PidScope } from "../core/tool.js";
import { currentPidScope } from "./pid-scope.js";
import { type ProcessGroupIdentity, thisHost } from "./process-identity.js";
import { processStartTime } from "./process-table.js";

/** Says "r" on fd 3, then waits for "go" there; end of file (the spawner died, or `kill`) runs nothing. */
const HOLD_SCRIPT = 'printf r >&3 2>/dev/null; IFS= read -r go <&3 && [ "$go" = go ] || exit 125; exec 3<&-; exec "$@"';

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

/** How the leader exited. */
export interface LeaderExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What came back on the control pipe by the time it closed. */
export interface HoldReport {
  /** The holder ran (inside its wrapper, if any); false: the wrapper exited before it started. */
  holderRan: boolean;
  /** The wrapper said it stopped processes the command left running. */
  straysStopped: boolean;
}

export interface HeldProcess extends ProcessGroupIdentity {
  /** The group's leader (the holder, or its wrapper): stdin is /dev/null, stdout and stderr are pipes. */
  child: ChildProcess;
  /** Settles when the leader exits, however early (listened for from the spawn on). */
  exited: Promise<LeaderExit>;
  /** Settles when the leader has exited and its stdio pipes are closed. */
  closed: Promise<void>;
  /** Settles when the control pipe closes (the holder closes its end before it execs the command; a wrapper at its exit). */
  report: Promise<HoldReport>;
  /**
   * Sends stdout and stderr chunks, in arrival order, to `listener` (one listener): those that came
   * before the call first. They are read from the spawn on — Node drains a pipe no one reads when
   * the leader exits, so a wrapper's message could otherwise be lost during an await.
   */
  onOutput(listener: (chunk: Buffer) => void): void;
  /** Runs the command. Once only; later calls do nothing. */
  release(): void;
  /** Kills the held group (nothing ran) and waits for the leader to exit. */
  discard(): Promise<void>;
  /**
   * Closes rhema's end of the control pipe once the leader is gone: a holder still waiting — its
   * wrapper killed before the release, the holder orphaned outside the group (a sandbox whose
   * inner process outlived its outer one) — reads end of file and exits, running nothing. Until
   * then the open pipe kept the holder waiting and rhema's event loop alive: a run that never exited.
   */
  dropHold(): void;
}

/** Spawns `argv` held in a process group of its own (see the module comment). Rejects when the program cannot start. */
export async function spawnHeld(req: HeldSpawnRequest): Promise<HeldProcess> {
  if (req.argv.length === 0) throw new Error("spawnHeld: argv is empty");
  const holder = ["/bin/sh", "-c", HOLD_SCRIPT, "rhema-held", ...req.argv];
  const [program, ...args] = req.wrap ? req.wrap(holder) : holder;
  const child = spawn(program!, args, { cwd: req.cwd, env: req.env, detached: true, stdio: ["ignore", "pipe", "pipe", "pipe"] });
  // The error listener comes first, before anything that could throw: a spawn that fails (EMFILE,
  // ENOENT) emits 'error' on the next tick, and an 'error' no one listens for ends the process.
  // It stays: a later 'error' (a kill that failed) must not crash rhema either.
  let spawnError: ((err: Error) => void) | null = null;
  child.on("error", (err) => spawnError?.(err));
  const spawned = new Promise<void>((resolveSpawn, reject) => {
    spawnError = reject;
    child.once("spawn", () => {
      spawnError = null;
      resolveSpawn();
    });
  });
  // Listened for before anything is awaited: a leader that exits at once must still be seen.
  const exited = new Promise<LeaderExit>((r) => child.once("exit", (code, signal) => r({ code, signal })));
  const closed = new Promise<void>((r) => child.once("close", () => r()));
  const hold = (child.stdio?.[3] ?? null) as Duplex | null; // no stdio at all when the pipes could not be made (EMFILE)
  if (!hold || !child.stdout || !child.stderr) {
    await spawned; // rejects with the spawn's own error when that is why the pipes are missing
    throw new Error(`spawnHeld: ${program} started without its pipes`);
  }
  const report = controlReport(hold);
  const early: Buffer[] = [];
  let forward: ((chunk: Buffer) => void) | null = null;
  const onData = (chunk: Buffer): void => (forward ? forward(chunk) : void early.push(chunk));
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  await spawned;
  const pgid = child.pid!;
  let released = false;
  let identity: { startTime: number; pidScope?: PidScope };
  try {
    identity = { startTime: (await processStartTime(pgid)) ?? 0, ...pidScopeField(await currentPidScope()) };
  } catch (err) {
    // /proc could not be read (the machine out of file handles): no identity to record, so nothing runs.
    killHeldGroup(pgid);
    hold.destroy();
    await exited;
    throw err;
  }
  return {
    host: thisHost(), pgid, ...identity, child, exited, closed, report,
    onOutput(listener) {
      for (const chunk of early.splice(0)) listener(chunk);
      forward = listener;
    },
    release() {
      if (released) return;
      released = true;
      hold.end("go\n");
    },
    async discard() {
      released = true;
      killHeldGroup(pgid);
      hold.destroy();
      await exited;
    },
    dropHold() {
      released = true;
      hold.destroy();
    },
  };
}

/** SIGKILL to a held group (it has run nothing). */
function killHeldGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** Reads the control pipe until it closes: "r" the holder ran, "s" the wrapper stopped strays. */
function controlReport(hold: Duplex): Promise<HoldReport> {
  const seen = { holderRan: false, straysStopped: false };
  hold.on("error", () => {}); // EPIPE when the holder died first: its exit tells the rest
  hold.on("data", (chunk: Buffer) => {
    const text = chunk.toString("latin1");
    if (text.includes("r")) seen.holderRan = true;
    if (text.includes("s")) seen.straysStopped = true;
  });
  return new Promise((r) => {
    const done = (): void => r({ ...seen });
    hold.once("end", done);
    hold.once("close", done);
  });
}

/** The scope as an optional field: absent where /proc cannot tell. */
function pidScopeField(scope: PidScope | null): { pidScope?: PidScope } {
  return scope ? { pidScope: scope } : {};
}
