/**
 * Running one command line with `bash -c` in a process group of its own, and making sure
 * nothing it started outlives the call: on timeout or cancel the whole group gets SIGTERM, then
 * SIGKILL after a grace period; processes still running in the group when bash exits (`cmd &`)
 * are stopped the same way. Descendants that left the group (setsid) are caught from a snapshot
 * of the process tree taken before signalling, with tree-kill as a backstop. Resolves only once
 * bash has exited and its output pipes are closed (or abandoned after a bounded wait).
 */
import { type ChildProcess, spawn } from "node:child_process";
import treeKill from "tree-kill";
import { descendantPids, groupRunning, isRunning } from "./process-table.js";

/** Between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 2000;
/** For processes left behind by a command that finished on its own. */
const STRAY_GRACE_MS = 500;
/** After the last signal: how long to wait for processes to vanish and pipes to close. */
const SETTLE_MS = 2000;
const POLL_MS = 25;

export interface GroupRun {
  command: string;
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal: AbortSignal;
  /** stdout and stderr chunks, in arrival order. */
  onOutput(chunk: Buffer): void;
}

export interface GroupOutcome {
  /** bash's exit code, or null when a signal ended it. */
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  /** Why the group was killed before bash finished, if it was. */
  killed: "timeout" | "cancel" | null;
  /** Processes were still running in the group after bash exited, and were stopped. */
  straysKilled: boolean;
}

export async function runProcessGroup(run: GroupRun): Promise<GroupOutcome> {
  const child = spawn("bash", ["-c", run.command], {
    cwd: run.cwd, env: run.env, detached: true, stdio: ["ignore", "pipe", "pipe"],
  });
  await new Promise<void>((resolveSpawn, reject) => {
    child.once("spawn", resolveSpawn);
    child.once("error", reject);
  });
  const pid = child.pid!;
  child.stdout!.on("data", run.onOutput);
  child.stderr!.on("data", run.onOutput);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once("exit", (code, signal) => r({ code, signal })));
  const closed = new Promise<void>((r) => child.once("close", () => r()));
  let killed: GroupOutcome["killed"] = null;
  let killing: Promise<void> | null = null;
  const stop = (why: "timeout" | "cancel"): void => {
    if (killing) return;
    killed = why;
    killing = killGroup(pid, KILL_GRACE_MS);
  };
  const timer = setTimeout(() => stop("timeout"), run.timeoutMs);
  const onAbort = (): void => stop("cancel");
  run.signal.addEventListener("abort", onAbort, { once: true });
  if (run.signal.aborted) onAbort();
  try {
    const exit = await exited;
    clearTimeout(timer);
    let straysKilled = false;
    if (!killing && (await groupRunning(pid))) {
      straysKilled = true;
      killing = killGroup(pid, STRAY_GRACE_MS);
    }
    if (killing) await killing;
    if (!(await settles(closed, SETTLE_MS))) abandonPipes(child);
    return { exitCode: exit.code, exitSignal: exit.signal, killed, straysKilled };
  } finally {
    clearTimeout(timer);
    run.signal.removeEventListener("abort", onAbort);
  }
}

/** SIGTERM to the group and the snapshot of its tree; SIGKILL to what is left after `graceMs`. */
async function killGroup(pid: number, graceMs: number): Promise<void> {
  const tree = await descendantPids(pid);
  const gone = async (): Promise<boolean> =>
    !(await groupRunning(pid)) && (await Promise.all(tree.map(isRunning))).every((running) => !running);
  signalAll([-pid, ...tree], "SIGTERM");
  if (await pollUntil(gone, graceMs)) return;
  signalAll([-pid, ...tree], "SIGKILL");
  treeKill(pid, "SIGKILL", () => {});
  await pollUntil(gone, SETTLE_MS);
}

function signalAll(targets: readonly number[], signal: NodeJS.Signals): void {
  for (const target of targets) {
    try {
      process.kill(target, signal);
    } catch {
      // already gone
    }
  }
}

async function pollUntil(done: () => Promise<boolean>, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (!(await done())) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return true;
}

async function settles(promise: Promise<void>, limitMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), limitMs)));
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A process outside our reach still holds the pipes: stop reading them. */
function abandonPipes(child: ChildProcess): void {
  child.stdout?.destroy();
  child.stderr?.destroy();
}
