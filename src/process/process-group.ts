/**
 * Running one command line with `bash -c` in a process group of its own — in the bubblewrap
 * sandbox when given one — and making sure nothing it started outlives the call or rhema: on
 * timeout or cancel the whole group gets SIGTERM, then SIGKILL after a grace period (group-kill.ts);
 * processes still running in the group when bash exits (`cmd &`) are stopped the same way. If
 * rhema itself dies, SIGKILL included, the sandbox's PID namespace dies with bwrap
 * (`--die-with-parent`), and an unsandboxed group is killed by its watcher (death-watch.ts).
 * The command is spawned held (held-spawn.ts): `onStarted` sees its group before anything runs.
 * Resolves only once bash has exited and its output pipes are closed (or abandoned after a
 * bounded wait).
 */
import type { ChildProcess } from "node:child_process";
import { startLongTimer } from "../core/long-timer.js";
import { type DeathWatch, watchForDeath } from "./death-watch.js";
import { KILL_GRACE_MS, SETTLE_MS, killGroup } from "./group-kill.js";
import { type HeldProcess, spawnHeld } from "./held-spawn.js";
import type { ProcessGroupIdentity } from "./process-identity.js";
import { groupRunning } from "./process-table.js";
import { type SandboxPlacement, bwrapArgv } from "./sandbox.js";

export { KILL_GRACE_MS } from "./group-kill.js";
/** For processes left behind by a command that finished on its own. */
const STRAY_GRACE_MS = 500;

export interface GroupRun {
  command: string;
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal: AbortSignal;
  /** stdout and stderr chunks, in arrival order. */
  onOutput(chunk: Buffer): void;
  /** Run in the bubblewrap sandbox, with `cwd` as the writable workspace unless `workspace` names another. */
  sandbox?: SandboxPlacement & { workspace?: string };
  /**
   * Awaited once the group exists and before the command runs (e.g. to checkpoint it). If it
   * throws, the group is killed, nothing has run, and the error is rethrown.
   */
  onStarted?(group: ProcessGroupIdentity): Promise<void>;
}

export interface GroupOutcome {
  /** bash's exit code, or null when a signal ended it. In the sandbox, a signal shows as 128 + its number. */
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  /** Why the group was killed before bash finished, if it was. */
  killed: "timeout" | "cancel" | null;
  /** Processes were still running in the group after bash exited, and were stopped. (In the sandbox, they die with it unseen.) */
  straysKilled: boolean;
}

export async function runProcessGroup(run: GroupRun): Promise<GroupOutcome> {
  const bash = ["bash", "-c", run.command];
  const sandbox = run.sandbox;
  const held = sandbox
    // bwrap starts with an empty environment (it is PID 1 inside, and its environ is readable
    // there); the command's comes through --setenv. The holder waits inside the sandbox.
    ? await spawnHeld({
      argv: bash, cwd: run.cwd, env: {},
      wrap: (holder) => bwrapArgv({ ...sandbox, workspace: sandbox.workspace ?? run.cwd, env: run.env, cwd: run.cwd }, holder),
    })
    : await spawnHeld({ argv: bash, cwd: run.cwd, env: run.env });
  let watch: DeathWatch | null = null;
  try {
    if (!run.sandbox) watch = await watchForDeath(held);
    await run.onStarted?.({ host: held.host, pgid: held.pgid, startTime: held.startTime });
  } catch (err) {
    await held.discard();
    watch?.dismiss();
    throw err;
  }
  try {
    return await runReleased(held, run);
  } finally {
    watch?.dismiss();
  }
}

async function runReleased(held: HeldProcess, run: GroupRun): Promise<GroupOutcome> {
  const { child, pgid } = held;
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
    killing = killGroup(pgid, KILL_GRACE_MS);
  };
  const timer = startLongTimer(() => stop("timeout"), run.timeoutMs);
  const onAbort = (): void => stop("cancel");
  run.signal.addEventListener("abort", onAbort, { once: true });
  if (run.signal.aborted) onAbort();
  else held.release();
  try {
    const exit = await exited;
    timer.clear();
    let straysKilled = false;
    if (!killing && (await groupRunning(pgid))) {
      straysKilled = true;
      killing = killGroup(pgid, STRAY_GRACE_MS);
    }
    if (killing) await killing;
    if (!(await settles(closed, SETTLE_MS))) abandonPipes(child);
    return { exitCode: exit.code, exitSignal: exit.signal, killed, straysKilled };
  } finally {
    timer.clear();
    run.signal.removeEventListener("abort", onAbort);
  }
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
