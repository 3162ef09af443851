/**
 * Running the chaos suite (chaos-suite.ts) with the real CLI and SIGKILLing it: one attempt at
 * a time, each resuming the run directory the last one left. After each kill it waits for the
 * killed run's processes to die (walking /proc for the run's marker and folder: what is still
 * alive past the limit is a survivor, then killed), and takes a snapshot of what the run
 * directory says of each planned trial (its folder `tasks/chaos/<task>/default/<n>/`) — every
 * file parses, which setup commands and checks are done, which calls have a `started` record —
 * for chaos-tally.ts to judge with the finished run.
 * Shared by the chaos test and `bench/chaos`.
 */
import type { ChildProcess } from "node:child_process";
import { chmod, readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { INTERRUPTED_RESULT } from "../../src/core/conversation.js";
import { toolCallsOf, type Message, type ToolResultBlock } from "../../src/core/messages.js";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { readStateFile } from "../../src/runner/run-dir/state-file.js";
import { TaskFolder } from "../../src/runner/run-dir/task-folder.js";
import { TASK_STATE_KIND } from "../../src/runner/run-dir/task-state.js";
import { CheckpointStore } from "../../src/store/checkpoint-store.js";
import {
  CHAOS_SUITE, type ChaosSuiteShape, type ChaosTrial, type Effect, type EffectKind, callOfCommand, chaosPaths, chaosSuiteFiles, chaosTrials, parseEffects,
} from "./chaos-suite.js";
import type { FinalRun, FinalTask, KillSnapshot, TaskSnapshot } from "./chaos-tally.js";
import { type CliResult, cliEnv, startCli } from "./cli.js";
import { type LiveProcess, type RunProcessQuery, killAll, survivorsAfter } from "./run-processes.js";
import { writeFiles } from "./suite-files.js";

/** The variable that marks every process of a chaos run (inherited by unsandboxed commands). */
export const CHAOS_MARK_VAR = "RHEMA_CHAOS_MARK";
/**
 * How long a killed run's processes may take to die (rhema's watchers walk /proc first). A
 * command of the suite that outlives rhema must still be running then to be seen: a check or
 * setup command killed inside it sleeps longer than this after the kill.
 */
export const SURVIVOR_LIMIT_MS = 1_000;
const POLL_MS = 15;

/**
 * When to SIGKILL an attempt: `delayMs` after its spawn, or after it writes its first new line of
 * a kind (a setup command's or check's `begin`, a call's effect), of position `index` when given —
 * inside that command when the delay is shorter than its sleep. `target`: rhema's pid alone, or
 * its whole process group.
 */
export interface KillPlan {
  after: "spawn" | EffectKind;
  index?: number;
  delayMs: number;
  target: "pid" | "group";
}

export interface ChaosRunOptions {
  /** A folder of its own: the suite, the effects log and the run directory (`run/`) go here. */
  root: string;
  shape: ChaosSuiteShape;
  concurrency: number;
  /** A string unique to this run (found nowhere else in /proc), given to it as RHEMA_CHAOS_MARK. */
  mark: string;
}

export interface AttemptOutcome {
  /** The kill landed (the CLI died of it). */
  killed: boolean;
  result: CliResult;
}

/** Writes the suite's files under `root`. */
export async function writeChaosSuite(root: string, shape: ChaosSuiteShape): Promise<void> {
  await writeFiles(root, chaosSuiteFiles(root, shape));
  await chmod(chaosPaths(root).effectProgram, 0o755);
}

export class ChaosRun {
  readonly out: string;
  /** One per kill that landed, in order. */
  readonly snapshots: KillSnapshot[] = [];
  private readonly query: RunProcessQuery;

  constructor(private readonly opts: ChaosRunOptions) {
    this.out = join(opts.root, "run");
    this.query = { mark: opts.mark, cwdUnder: opts.root };
  }

  /** Runs the CLI once (resuming), killed as `kill` plans unless it finishes first. */
  async attempt(kill: KillPlan | null): Promise<AttemptOutcome> {
    // Unsandboxed: the effects go to a log outside the workspace (so no workspace reset can hide a
    // duplicate), which the sandbox would refuse. It is also the harder case for orphans — the
    // death watch, not a PID namespace, must stop them; test/process/nothing-outlives covers both.
    const args = ["run", CHAOS_SUITE, "--out", this.out, "--concurrency", String(this.opts.concurrency), "--sandbox", "off",
      ...(this.opts.shape.repeats > 1 ? ["--repeats", String(this.opts.shape.repeats)] : [])];
    const linesBefore = (await this.effects()).length;
    const run = startCli(args, { cwd: this.opts.root, env: cliEnv({ [CHAOS_MARK_VAR]: this.opts.mark }), detached: true });
    const disarm = kill ? this.arm(run.child, kill, linesBefore) : () => {};
    const result = await run.done;
    disarm();
    if (result.signal !== "SIGKILL") return { killed: false, result };
    const linesAtDeath = (await this.effects()).length;
    const survivors = await survivorsAfter(this.query, SURVIVOR_LIMIT_MS);
    if (survivors.length > 0) {
      killAll(survivors);
      const stubborn = await survivorsAfter(this.query, SURVIVOR_LIMIT_MS);
      if (stubborn.length > 0) throw new Error(`processes of the run survive SIGKILL: ${describe(stubborn)}`);
    }
    this.snapshots.push(await this.snapshot(survivors, linesAtDeath));
    return { killed: true, result };
  }

  /**
   * How the run ended, read from its run directory and effects log (after the last attempt, which
   * exited `exitCode`): each planned trial's result (from its folder's result.json) and session,
   * and the results of trials it did not plan.
   */
  async final(exitCode: number | null): Promise<FinalRun> {
    const results = await readRunResults(this.out);
    const planned = chaosTrials(this.opts.shape);
    const tasks: FinalTask[] = [];
    for (const trial of planned) {
      const folder = trialFolder(this.out, trial);
      const result = await folder.readResult();
      const session = await new CheckpointStore(folder.dir).load();
      const tags = (await readFile(join(folder.workspace, "tags.txt"), "utf8").catch(() => "")).split("\n").filter((l) => l !== "");
      tasks.push({
        id: trial.task, repeat: trial.repeat, status: result?.status ?? null, checksPassed: result?.checks.map((c) => c.passed) ?? [],
        calls: finalCalls(session?.messages ?? []), tags,
      });
    }
    const unplanned = results.filter((r) => !planned.some((t) => t.task === r.id && t.repeat === (r.trial?.repeat ?? 1)) || r.suite !== CHAOS_SUITE)
      .map((r) => `${r.suite}/${r.id}#${r.trial?.repeat ?? 1}`);
    return { exitCode, tasks, unplanned, effects: await this.effects() };
  }

  /** The effects log as it is now. */
  async effects(): Promise<Effect[]> {
    return parseEffects(await readFile(chaosPaths(this.opts.root).effectsLog, "utf8").catch(() => ""));
  }

  /** Arms the kill; returns its disarm, for a run that ends first. */
  private arm(child: ChildProcess, kill: KillPlan, linesBefore: number): () => void {
    let timer: NodeJS.Timeout | undefined;
    let poller: NodeJS.Timeout | undefined;
    const fire = () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(kill.target === "group" ? -child.pid! : child.pid!, "SIGKILL");
    };
    const start = () => (timer = setTimeout(fire, kill.delayMs));
    if (kill.after === "spawn") start();
    else {
      const watch = async (): Promise<void> => {
        const fresh = (await this.effects()).slice(linesBefore);
        const begun = (e: Effect) => e.kind === kill.after && (e.begin || e.kind === "call") && (kill.index === undefined || e.index === kill.index);
        if (fresh.some(begun)) start();
        else poller = setTimeout(() => void watch(), POLL_MS);
      };
      void watch();
    }
    return () => {
      clearTimeout(timer);
      clearTimeout(poller);
      timer = undefined;
      poller = undefined;
    };
  }

  private async snapshot(survivors: LiveProcess[], linesAtDeath: number): Promise<KillSnapshot> {
    const unparsed = await unparsedFiles(this.out);
    const tasks: TaskSnapshot[] = [];
    for (const trial of chaosTrials(this.opts.shape)) {
      const folder = trialFolder(this.out, trial);
      const state = await readStateFile(folder.path("state"), TASK_STATE_KIND).catch((err: Error) => (unparsed.push(err.message), null));
      const session = await new CheckpointStore(folder.dir).load().catch((err: Error) => (unparsed.push(err.message), null));
      const doneOf = (records: ReadonlyArray<{ status: string }>) => records.flatMap((r, i) => (r.status === "done" ? [i] : []));
      const calls = session?.messages.flatMap(toolCallsOf) ?? [];
      const startedCalls = Object.entries(session?.calls ?? {}).filter(([, record]) => record.state === "started").flatMap(([callId]) => {
        const call = calls.find((c) => c.id === callId);
        const of = call ? callOfCommand(String((call.input as { command?: unknown }).command)) : null;
        return of ? [of.index] : [];
      });
      tasks.push({ id: trial.task, repeat: trial.repeat, setupDone: doneOf(state?.setup ?? []), checksDone: doneOf(state?.checks ?? []), startedCalls });
    }
    const effectLines = (await this.effects()).length;
    return { effectLines, lateEffects: effectLines - linesAtDeath, tasks, unparsed, survivors };
  }
}

function trialFolder(out: string, trial: ChaosTrial): TaskFolder {
  return new TaskFolder(out, { suite: CHAOS_SUITE, id: trial.task, variant: null, repeat: trial.repeat });
}

function finalCalls(messages: readonly Message[]): FinalTask["calls"] {
  const results = new Map(messages.flatMap((m) => m.content).filter((b): b is ToolResultBlock => b.type === "tool_result").map((r) => [r.callId, r]));
  return messages.flatMap(toolCallsOf).flatMap((call) => {
    const of = callOfCommand(String((call.input as { command?: unknown }).command));
    if (!of) return [];
    const result = results.get(call.id);
    return [{ index: of.index, answered: result !== undefined, interrupted: result !== undefined && String(result.content).startsWith(INTERRUPTED_RESULT) }];
  });
}

/**
 * Files of a run directory that do not parse (path: why): every JSON file, every JSON-lines
 * file up to a torn last line (a kill mid-append), junit.xml whole. Workspaces are not rhema's.
 */
export async function unparsedFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return []; // killed before it made the run directory
    throw err;
  });
  const problems: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile() || entry.parentPath.includes("/workspace")) continue;
    const path = join(entry.parentPath, entry.name);
    const text = await readFile(path, "utf8").catch(() => null);
    if (text === null) continue; // removed since the listing (a temp file renamed)
    const parses = (t: string) => {
      try {
        JSON.parse(t);
        return true;
      } catch {
        return false;
      }
    };
    if (entry.name.endsWith(".json") || entry.name === "rhema.lock") {
      if (entry.name === "rhema.lock" && text === "") continue; // created, not yet written: taken over as stale
      if (!parses(text)) problems.push(`${path}: not JSON`);
    } else if (entry.name.endsWith(".jsonl")) {
      const bad = text.split("\n").slice(0, -1).findIndex((line) => !parses(line));
      if (bad !== -1) problems.push(`${path}: line ${bad + 1} is not JSON`);
    } else if (entry.name === "junit.xml" && !/^<\?xml[\s\S]*<\/testsuites>\s*$/.test(text)) {
      problems.push(`${path}: not whole`);
    }
  }
  return problems;
}

function describe(processes: readonly LiveProcess[]): string {
  return processes.map((p) => `${p.pid} (${p.why}) ${p.cmdline}`).join("; ");
}
