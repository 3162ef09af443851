/**
 * Running one command line with `bash -c` in a process group of its own — in the bubblewrap
 * sandbox when given one — and making sure nothing it started outlives the call or rhema: on
 * timeout or cancel the whole group gets SIGTERM, then SIGKILL after a grace period (group-kill.ts);
 * processes still running when bash exits (`cmd &`, `(setsid cmd &)`) are stopped the same way.
 * Which guard holds them:
 *
 *   sandbox      bwrap's PID namespace (`--die-with-parent`): everything dies with bwrap
 *   no sandbox   the reaper (subreaper.ts): a child subreaper leading the group, so setsid
 *                escapees stay its descendants; it stops them when bash exits and when rhema dies
 *   neither      (no perl) the death watch (death-watch.ts) and a snapshot of the tree: best effort
 *
 * Unsandboxed, each command also carries a mark in its environment (`RHEMA_COMMAND_MARK`), which
 * what it starts inherits. When there is no reaper, or the reaper itself was killed (a command can
 * SIGKILL its parent), processes still carrying the mark after the command ended are killed: a
 * setsid escapee reparented to init is found that way (one that clears its environment is not).
 *
 * The command is spawned held (held-spawn.ts): `onStarted` sees its group before anything runs.
 * A wrapper (bwrap, the reaper) that exits before the command started is a `sandbox_failed`
 * error carrying its own message, never a silent exit. Resolves only once bash has exited and its
 * output pipes are closed (or abandoned after a bounded wait).
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { startLongTimer } from "../core/long-timer.js";
import { RhemaError } from "../core/errors.js";
import { HeadTailBuffer } from "./capped-output.js";
import { type DeathWatch, watchForDeath } from "./death-watch.js";
import { KILL_GRACE_MS, SETTLE_MS, killGroup, signalAll } from "./group-kill.js";
import { type HeldProcess, spawnHeld } from "./held-spawn.js";
import type { ProcessGroupIdentity } from "./process-identity.js";
import { groupRunning, pidsWithEnvironmentEntry } from "./process-table.js";
import { type SandboxPlacement, bwrapArgv } from "./sandbox.js";
import { probeReaper, reaperArgv } from "./subreaper.js";

export { KILL_GRACE_MS } from "./group-kill.js";
/** For processes left behind by a command that finished on its own. */
const STRAY_GRACE_MS = 500;
/** The variable an unsandboxed command's processes carry, to be found after it ends (see the module comment). */
export const COMMAND_MARK_VARIABLE = "RHEMA_COMMAND_MARK";
/** How much of a wrapper's own output a start failure quotes. */
const WRAPPER_MESSAGE_BYTES = 2_000;

/** The command's wrapper (bwrap, the reaper) exited before the command started: its own words say why. */
export class CommandStartError extends RhemaError {
  constructor(wrapper: string, exit: { code: number | null; signal: NodeJS.Signals | null }, said: string) {
    const how = exit.code !== null ? `exited with code ${exit.code}` : `was killed by ${exit.signal ?? "a signal"}`;
    const words = said.trim() === "" ? "and said nothing" : `saying: ${said.trim()}`;
    super("sandbox_failed", `${wrapper} did not start the command: it ${how} ${words}`);
  }
}

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
  const reaper = sandbox ? null : await probeReaper();
  const markValue = sandbox ? null : randomBytes(12).toString("hex");
  const env = markValue === null ? run.env : { ...run.env, [COMMAND_MARK_VARIABLE]: markValue };
  const held = sandbox
    // bwrap starts with an empty environment (it is PID 1 inside, and its environ is readable
    // there); the command's comes through --setenv. The holder waits inside the sandbox.
    ? await spawnHeld({
      argv: bash, cwd: run.cwd, env: {},
      wrap: (holder) => bwrapArgv({ ...sandbox, workspace: sandbox.workspace ?? run.cwd, env: run.env, cwd: run.cwd }, holder),
    })
    : reaper?.ok
      ? await spawnHeld({
        argv: bash, cwd: run.cwd, env,
        wrap: (holder) => reaperArgv(reaper.reaper, holder, { parentPid: process.pid, graceMs: STRAY_GRACE_MS }),
      })
      : await spawnHeld({ argv: bash, cwd: run.cwd, env });
  const wrapper = sandbox ? "the sandbox (bwrap)" : reaper?.ok ? "the process reaper (perl)" : "the command's shell (/bin/sh)";
  let watch: DeathWatch | null = null;
  try {
    if (!sandbox && !reaper?.ok) watch = await watchForDeath(held);
    await run.onStarted?.({ host: held.host, pgid: held.pgid, startTime: held.startTime, ...(held.pidScope ? { pidScope: held.pidScope } : {}) });
  } catch (err) {
    await held.discard();
    watch?.dismiss();
    throw err;
  }
  try {
    return await runReleased(held, run, wrapper, markValue === null ? null : { entry: `${COMMAND_MARK_VARIABLE}=${markValue}`, reaped: reaper?.ok === true });
  } finally {
    watch?.dismiss();
  }
}

/** An unsandboxed command's environment mark, and whether a reaper ran it. */
interface CommandMark {
  entry: string;
  reaped: boolean;
}

async function runReleased(held: HeldProcess, run: GroupRun, wrapper: string, mark: CommandMark | null): Promise<GroupOutcome> {
  const { child, pgid, exited, closed } = held;
  // The first bytes are kept apart: before the holder runs, only the wrapper speaks.
  const opening = new HeadTailBuffer(WRAPPER_MESSAGE_BYTES, 0);
  const onOutput = (chunk: Buffer): void => {
    opening.push(chunk);
    run.onOutput(chunk);
  };
  held.onOutput(onOutput);
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
    const report = await settlesWith(held.report, SETTLE_MS, { holderRan: true, straysStopped: false });
    if (!report.holderRan && !killing) {
      await settles(closed, SETTLE_MS);
      throw new CommandStartError(wrapper, exit, opening.text());
    }
    // After a timeout or cancel the reaper may still see the group's last members dying: they
    // were killed with the command, not left behind by it.
    let straysKilled = !killing && report.straysStopped;
    // null: /proc could not be read (the machine out of file handles): the group is stopped all
    // the same, and nothing is claimed about it.
    const running = killing ? false : await groupRunning(pgid).catch(() => null);
    if (running !== false) {
      straysKilled ||= running === true;
      killing = killGroup(pgid, STRAY_GRACE_MS);
    }
    if (killing) await killing;
    // Without a reaper, or with the reaper killed (it re-raises the command's own signal too, so a
    // signal is when to look), what carries the mark has escaped the group and the tree.
    if (mark !== null && (!mark.reaped || exit.signal !== null)) {
      const marked = await pidsWithEnvironmentEntry(mark.entry);
      if (marked.length > 0) {
        straysKilled ||= killed === null;
        signalAll(marked, "SIGKILL");
      }
    }
    if (!(await settles(closed, SETTLE_MS))) abandonPipes(child);
    return { exitCode: exit.code, exitSignal: exit.signal, killed, straysKilled };
  } finally {
    // Released, the holder closed its end before exec; cancelled before that, it may wait still.
    held.dropHold();
    timer.clear();
    run.signal.removeEventListener("abort", onAbort);
  }
}

async function settles(promise: Promise<void>, limitMs: number): Promise<boolean> {
  return settlesWith(promise.then(() => true), limitMs, false);
}

/** `promise`'s value, or `otherwise` once `limitMs` passes first. */
async function settlesWith<T>(promise: Promise<T>, limitMs: number, otherwise: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((r) => (timer = setTimeout(() => r(otherwise), limitMs)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A process outside our reach still holds the pipes: stop reading them. */
function abandonPipes(child: ChildProcess): void {
  child.stdout?.destroy();
  child.stderr?.destroy();
}
