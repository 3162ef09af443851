/**
 * task-state.json: what the runner knows of one task between runs — which task file (by
 * content hash) the folder belongs to, how far the workspace is made (copied; each setup command
 * started or done), each check started or done (with its outcome), how often it resumed. The
 * conversation itself lives in the checkpoint beside it. `TaskFolder` (task-folder.ts) reads and
 * writes it, always whole and atomically (temp + fsync + rename: a kill mid-write leaves the old
 * state or the new one, never a mix); this module owns its shape and the pure changes to it.
 *
 * Fields added after version 1 was first written read with defaults, so an older state file
 * is the same state: no workspace copy recorded (it is made again unless setup was done), no
 * command or check records.
 */
import { z } from "zod";
import { checkOutcomeSchema, resultChangesSchema, taskSpendSchema, type CheckOutcome } from "./task-result.js";
import type { StateFileKind } from "./state-file.js";

const isoTime = z.string();
const attempt = z.number().int().positive();

/** One setup command: started (it may have partly run, if no `done` followed) or done (exit 0). */
export const setupRecordSchema = z.discriminatedUnion("status", [
  z.strictObject({ status: z.literal("started"), command: z.string(), startedAt: isoTime, attempt }),
  z.strictObject({ status: z.literal("done"), command: z.string(), startedAt: isoTime, finishedAt: isoTime, attempt }),
]);

/** One check: started (interrupted, if no `done` followed: it runs again) or done with its outcome. */
const checkRecordSchema = z.discriminatedUnion("status", [
  z.strictObject({ status: z.literal("started"), name: z.string(), startedAt: isoTime, attempt }),
  z.strictObject({ status: z.literal("done"), name: z.string(), startedAt: isoTime, attempt, outcome: checkOutcomeSchema }),
]);

const taskStateSchema = z.strictObject({
  version: z.literal(1),
  contentHash: z.string(),
  /** The workspace is copied and every setup command exited 0. */
  setupDone: z.boolean(),
  /** Times a run found this task unfinished and continued it. */
  resumed: z.number().int().nonnegative(),
  /** When the task first started (ISO). */
  startedAt: z.string(),
  /**
   * Time spent on the task by earlier, interrupted runs: a resumed task's timeout and duration
   * count it. Recorded at each checkpoint boundary and on SIGINT/SIGTERM, so a SIGKILLed run
   * loses at most the time since its last boundary.
   */
  activeMs: z.number().int().nonnegative().default(0),
  /** `workspace.from` is copied into the workspace: from here on it is never made again. */
  workspaceCopied: z.boolean().default(false),
  /**
   * A layered workspace (layer-mounts.ts): the prepared base (`prepared/<base>/workspace/`) its
   * layer lies over and how it is mounted; recorded before the first mount, so a resume mounts the
   * same layer again. null: a copied (or cloned, or empty) workspace.
   */
  layer: z.strictObject({ base: z.string().regex(/^[0-9a-f]{16,64}$/), mechanism: z.enum(["overlay", "fuse-overlayfs"]) }).nullable().default(null),
  /**
   * The commit a git workspace (`workspace.git`) is checked out at: its `ref` resolved on the
   * trial's first run, before the clone. A resume (or `--retry-errored`) clones this commit again
   * even if the branch moved; `--restart` drops the state and resolves anew. null: not resolved
   * yet, or no git workspace.
   */
  gitCommit: z.string().regex(/^[0-9a-f]{40,64}$/).nullable().default(null),
  /**
   * The workspace's snapshot right after setup, which changes.patch diffs against: its tree in the
   * run's `changes-objects/`, or why none could be taken. Taken once, before `setupDone`; null: not
   * taken (setup not done, or done by a rhema that took none: then no patch is made). `baseFiles`:
   * the folder whose files the tree names without their contents stored (a copied fixture; a
   * layered trial's base, which its `layer` names too), read when a patch shows one of them.
   */
  changesBase: z.union([z.strictObject({ tree: z.string(), baseFiles: z.string().optional() }), z.strictObject({ unavailable: z.string() })]).nullable().default(null),
  /** changes.patch as written after the turn ended (before the checks); null: not yet, or the turn is to run again. */
  changes: resultChangesSchema.nullable().default(null),
  /** Setup commands by position, as far as they got; a finished one is never run again. */
  setup: z.array(setupRecordSchema).default([]),
  /** Checks by position, as far as they got; a finished one keeps its outcome. */
  checks: z.array(checkRecordSchema).default([]),
  /**
   * What the task had spent when a run was last interrupted while it ran (SIGINT/SIGTERM): a
   * later run that leaves the task alone (another `--filter`) still reports it. null: never
   * interrupted that way (a SIGKILLed run records none).
   */
  interruptedSpent: taskSpendSchema.nullable().default(null),
});
export type TaskState = z.infer<typeof taskStateSchema>;
export type SetupRecord = z.infer<typeof setupRecordSchema>;
export type CheckRecord = z.infer<typeof checkRecordSchema>;

export const TASK_STATE_KIND: StateFileKind<TaskState> = {
  schema: taskStateSchema,
  code: "state_invalid",
  what: "a rhema task state",
  remedy: "remove the task's folder to start it afresh",
};

/** The state of a task that has not started anything yet. */
export function freshTaskState(contentHash: string, startedAt: string): TaskState {
  return { version: 1, contentHash, setupDone: false, resumed: 0, startedAt, activeMs: 0, workspaceCopied: false, layer: null, gitCommit: null, changesBase: null, changes: null, setup: [], checks: [], interruptedSpent: null };
}

/** `records` with `record` at `index` (a record at the end, or one replacing its earlier attempt). */
export function withRecord<R>(records: readonly R[], index: number, record: R): R[] {
  const next = records.slice(0, index);
  next[index] = record;
  return next;
}

/** What keeps setup records: a task's state, or a shared setup's (prepared-state.ts). */
export type SetupRecords = { setup: SetupRecord[] };

/** Setup command `index` (`command`) starts: its attempt counts on from an interrupted one's. */
export function setupStarted<S extends SetupRecords>(state: S, index: number, command: string, at: string): S {
  const earlier = state.setup[index];
  const record: SetupRecord = { status: "started", command, startedAt: at, attempt: (earlier?.attempt ?? 0) + 1 };
  return { ...state, setup: withRecord(state.setup, index, record) };
}

export function setupFinished<S extends SetupRecords>(state: S, index: number, at: string): S {
  const started = state.setup[index];
  if (started?.status !== "started") return state;
  return { ...state, setup: withRecord(state.setup, index, { ...started, status: "done", finishedAt: at }) };
}

export function checkStarted(state: TaskState, index: number, name: string, at: string): TaskState {
  const earlier = state.checks[index];
  const record: CheckRecord = { status: "started", name, startedAt: at, attempt: (earlier?.attempt ?? 0) + 1 };
  return { ...state, checks: withRecord(state.checks, index, record) };
}

export function checkFinished(state: TaskState, index: number, outcome: CheckOutcome): TaskState {
  const started = state.checks[index];
  if (started?.status !== "started") return state;
  return { ...state, checks: withRecord(state.checks, index, { status: "done", name: started.name, startedAt: started.startedAt, attempt: started.attempt, outcome }) };
}

/**
 * The state of a task whose setup failed, for `--retry-errored`: the workspace is made afresh
 * and every setup command runs again (a failed `npm ci` may have left half a `node_modules`).
 * Its start, resumes, time spent and a git workspace's resolved commit stay.
 */
export function setupRetried(state: TaskState): TaskState {
  return { ...state, setupDone: false, workspaceCopied: false, layer: null, changesBase: null, changes: null, setup: [], checks: [] };
}
