/**
 * One trial's folder in a run directory, `tasks/<suite>/<id>/<variant|default>/<n>/` (layout 2;
 * a run directory made before trials, layout 1, has one folder per task, `tasks/<suite>/<id>/`,
 * which reports, merge and replay still read): the only code that joins its paths or reads and
 * writes its files —
 *
 *   workspace/              the task's copy of `workspace.from` (or clone of `workspace.git`), where the agent works;
 *                           on a layered run, the mount point of its base and layer (layer-mounts.ts)
 *   layer/upper/            a layered workspace's own layer: what the trial wrote (and deleted, as
 *   layer/work/             whiteouts); `work/` is the overlay's scratch folder
 *   session.json            the checkpoint (with its journal, the journal's counter and the
 *   session.journal.jsonl   fingerprint of the call started last beside it)
 *   session.journal.count
 *   session.fingerprint.json
 *   task-state.json         workspace copied, each setup command and check started or done,
 *                           resumes, time spent (task-state.ts)
 *   events.jsonl            the transcript (event-log.ts)
 *   final-answer.txt        the agent's final answer, for checks (RHEMA_FINAL_ANSWER)
 *   output.json             a task with `output:`: its accepted answer, for checks (RHEMA_OUTPUT)
 *   changes.git/            the workspace's snapshot after setup: a git index (its objects are in
 *                           the run's shared `changes-objects/`, its start copied from the run's
 *                           `changes-indexes/` of the fixture; workspace-changes.ts)
 *   changes.patch           the agent's changes against that snapshot, for checks (RHEMA_CHANGES)
 *   result.json             the outcome (task-result.ts)
 *
 * Temp files that an atomic write of one of these left behind when its run was killed
 * (`session.json.123456`) are removed when a run takes the task up again.
 *
 * Every read validates and names the file when it is wrong; every failed write is an
 * `OutputError` naming the file and the operation (the run stops, exit 3, nothing lost).
 */
import { mkdir, readFile, realpath, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Commit, CommitHook } from "../../core/commit-hook.js";
import { RhemaError, errnoCode, errorMessage } from "../../core/errors.js";
import type { Usage } from "../../core/provider.js";
import type { Session } from "../../core/session.js";
import { CheckpointStore, type CheckpointStoreOptions } from "../../store/checkpoint-store.js";
import { PRIVATE_FILE_MODE, removeAtomicTemps, replaceFileAtomic, writePrivateFileAtomic, writePrivateJson, type Durability } from "../../store/private-files.js";
import type { TaskEvent } from "./runner-events.js";
import type { SecretRedactor } from "./secret-redactor.js";
import { EventLog } from "./event-log.js";
import { copyFixture } from "../tasks/fixture-copy.js";
import { PreparedFolder } from "./prepared-folder.js";
import { asOutputError, guardOutput, machineReadError } from "./output-guard.js";
import { readStateFile, writeStateFile } from "./state-file.js";
import { TaskResultFileError, checkTaskResult, parseTaskResult, type TaskResult } from "./task-result.js";
import { taskKey } from "../tasks/task-key.js";
import { TASK_STATE_KIND, type TaskState } from "./task-state.js";
import { NO_VARIANT_FOLDER, trialFolderSegments, type TrialKey } from "../trials/trial-key.js";

/** The folder of a run directory that holds one folder per suite, one per task in it. */
export const TASKS_DIR = "tasks";

/** A task folder's files by role. */
export const TASK_FILES = {
  session: "session.json",
  journal: "session.journal.jsonl",
  counter: "session.journal.count",
  fingerprint: "session.fingerprint.json",
  state: "task-state.json",
  events: "events.jsonl",
  finalAnswer: "final-answer.txt",
  /** A task with `output:`: the accepted answer, as JSON (RHEMA_OUTPUT). */
  output: "output.json",
  changes: "changes.patch",
  result: "result.json",
  /** Which exchanges of the trial's cassette a replay used (`--cassette`, cassette-use.ts). */
  cassetteUsed: "cassette-used.json",
} as const;
export type TaskFileRole = keyof typeof TASK_FILES;

const WORKSPACE_DIR = "workspace";
const LAYER_DIR = "layer";
const CHANGES_GIT_DIR = "changes.git";
/** The run's object store that every trial's snapshot shares (workspace-changes.ts). */
export const CHANGES_OBJECTS_DIR = "changes-objects";
/** The run's mirrors of the repositories git workspaces are cloned from. */
export const GIT_MIRRORS_DIR = "git-mirrors";
/** The run's fixture indexes, copied into each trial's snapshot so it hashes only what setup changed. */
export const FIXTURE_INDEXES_DIR = "changes-indexes";

export interface TaskRef {
  suite: string;
  id: string;
}

/** What a folder is of: a trial (layout 2), or a task's one trial in a run directory made before trials (layout 1). */
export type FolderRef = TrialKey | TaskRef;

export class TaskFolder {
  readonly suite: string;
  readonly id: string;
  /** The trial the folder holds; null for a layout-1 task folder. */
  readonly trial: TrialKey | null;
  /** Absolute: `<runDir>/tasks/<suite>/<id>/<variant|default>/<n>` (layout 1: `<runDir>/tasks/<suite>/<id>`). */
  readonly dir: string;
  /** The folder's path segments under the run directory. */
  private readonly segments: string[];

  constructor(private readonly runDir: string, ref: FolderRef) {
    this.suite = plainName(ref.suite);
    this.id = plainName(ref.id);
    this.trial = "repeat" in ref ? ref : null;
    this.segments = this.trial === null ? [TASKS_DIR, this.suite, this.id] : [TASKS_DIR, ...trialFolderSegments(this.trial).map(plainName)];
    this.dir = join(runDir, ...this.segments);
  }

  /** The agent's workspace. */
  get workspace(): string {
    return join(this.dir, WORKSPACE_DIR);
  }

  /** A layered workspace's own layer, which receives its writes (overlay upperdir). */
  get layerUpper(): string {
    return join(this.dir, LAYER_DIR, "upper");
  }

  /** A layered workspace's overlay scratch folder (workdir). */
  get layerWork(): string {
    return join(this.dir, LAYER_DIR, "work");
  }

  /** Removes the workspace and its layer (neither may be mounted: the caller unmounted it). */
  async removeWorkspaceAndLayer(): Promise<void> {
    for (const dir of [this.workspace, join(this.dir, LAYER_DIR)]) await guardOutput(dir, "remove", () => rm(dir, { recursive: true, force: true }));
  }

  /** The git folder of the workspace's snapshot after setup. */
  get changesGitDir(): string {
    return join(this.dir, CHANGES_GIT_DIR);
  }

  /** The run's mirrors of git workspaces' repositories (git-mirror.ts). */
  get gitMirrorsDir(): string {
    return join(this.runDir, GIT_MIRRORS_DIR);
  }

  /** The run's shared object store of snapshots. */
  get changesObjectsDir(): string {
    return join(this.runDir, CHANGES_OBJECTS_DIR);
  }

  /** The workspace of the run's prepared base `hash` (prepared-folder.ts): what a layered trial's layer is mounted over. */
  preparedWorkspace(hash: string): string {
    return new PreparedFolder(this.runDir, hash).workspace;
  }

  /** The run's git indexes of fixtures as copied, one per fixture and changes settings (workspace-changes.ts). */
  get fixtureIndexesDir(): string {
    return join(this.runDir, FIXTURE_INDEXES_DIR);
  }

  path(role: TaskFileRole): string {
    return join(this.dir, TASK_FILES[role]);
  }

  /** The file's path relative to the run directory, `/`-separated, as results record it. */
  relativePath(role: TaskFileRole): string {
    return [...this.segments, TASK_FILES[role]].join("/");
  }

  /** The finished result, or null when the task has none yet; a bad file is an error naming it. */
  async readResult(): Promise<TaskResult | null> {
    const path = this.path("result");
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return null;
      throw machineReadError(err, path) ?? new TaskResultFileError(path, `cannot read: ${errorMessage(err)}`, { cause: err });
    }
    const result = parseTaskResult(text, path);
    if (!this.holds(result)) throw new TaskResultFileError(path, `holds ${resultName(result)}, not ${this.name}`);
    return result;
  }

  /** What the folder holds, as errors name it: `suite/id`, with the trial's variant and repeat. */
  get name(): string {
    return this.trial === null ? `${this.suite}/${this.id}` : `${this.suite}/${this.id} trial ${trialFolderSegments(this.trial).slice(2).join("/")}`;
  }

  /** Whether `result` is of this folder's task and trial (a layout-1 folder holds results without a trial). */
  private holds(result: TaskResult): boolean {
    if (result.suite !== this.suite || result.id !== this.id) return false;
    if (this.trial === null) return result.trial === undefined;
    return result.trial !== undefined && result.trial.repeat === this.trial.repeat && result.trial.variant === this.trial.variant;
  }

  /** Validates `result` and writes it (atomic, 0600); returns the file's path. */
  async writeResult(result: TaskResult): Promise<string> {
    const path = this.path("result");
    if (!this.holds(result)) throw new RhemaError("internal", `a result of ${resultName(result)} cannot go into the folder of ${this.name}`);
    const checked = checkTaskResult(result, path);
    await guardOutput(path, "write", () => writePrivateJson(path, checked));
    return path;
  }

  /** Drops the result (the checkpoint stays), so the next run continues the task. */
  async removeResult(): Promise<void> {
    const path = this.path("result");
    await guardOutput(path, "remove", () => rm(path, { force: true }));
  }

  readState(): Promise<TaskState | null> {
    return readStateFile(this.path("state"), TASK_STATE_KIND);
  }

  /** `durability` `contents`: see `TaskStateBook.update`. */
  writeState(state: TaskState, durability: Durability = "full"): Promise<void> {
    return writeStateFile(this.path("state"), state, durability);
  }

  /** The state as one writer keeps it from here on (see `TaskStateBook`). */
  stateBook(state: TaskState): TaskStateBook {
    return new TaskStateBook(this, state);
  }

  /** Writes the agent's final answer (atomic, 0600) where checks read it; returns its path. */
  async writeFinalAnswer(text: string): Promise<string> {
    const path = this.path("finalAnswer");
    await guardOutput(path, "write", () => writePrivateFileAtomic(path, text));
    return path;
  }

  /** Writes the accepted structured answer (atomic, 0600) as JSON where checks read it; returns its path. */
  async writeOutput(value: unknown): Promise<string> {
    const path = this.path("output");
    await guardOutput(path, "write", () => writePrivateJson(path, value));
    return path;
  }

  /** Writes changes.patch (atomic, 0600) where checks read it. */
  async writeChangesPatch(bytes: Buffer): Promise<void> {
    const path = this.path("changes");
    await guardOutput(path, "write", () => writePrivateFileAtomic(path, bytes));
  }

  /**
   * Removes the temp files of atomic writes that a killed run left in the folder; called when a
   * run takes the task up (it holds the run directory's lock, so no write of another is under way).
   */
  async removeStaleTemps(): Promise<string[]> {
    return guardOutput(this.dir, "remove", () => removeAtomicTemps(this.dir, Object.values(TASK_FILES)));
  }

  /**
   * The state written atomically (temp + rename, 0600) but without fsync: it survives a kill
   * of rhema (the page cache stays), not a crash of the machine. For the active time recorded
   * at every boundary, where an fsync would cost ~20 ms each.
   */
  async recordState(state: TaskState): Promise<void> {
    const path = this.path("state");
    await guardOutput(path, "write", () => replaceFileAtomic(path, JSON.stringify(state, null, 2) + "\n", { mode: PRIVATE_FILE_MODE, fsync: false }));
  }

  /** The transcript, opened for appending (a torn last line of a killed run is cut off first). */
  openEventLog(redactor: SecretRedactor, forward: (event: TaskEvent) => void, now: () => Date): Promise<EventLog> {
    return EventLog.open(this.path("events"), redactor, forward, now);
  }

  /** When each model request of the task was sent (from its event log), ms after the first. */
  async readRequestTimes(): Promise<number[]> {
    const text = await readFile(this.path("events"), "utf8").catch(() => "");
    const times: number[] = [];
    for (const line of text.split("\n")) {
      if (!line.includes('"type":"request"')) continue;
      try {
        const at = Date.parse((JSON.parse(line) as { at?: string }).at ?? "");
        if (Number.isFinite(at)) times.push(at);
      } catch {
        // a torn line: that request's time is unknown, and a replay spaces it like one without times
      }
    }
    const first = times[0] ?? 0;
    return times.map((t) => t - first);
  }

  /**
   * Each model request's usage as the provider reported it (the `usage` event after its
   * `request` event), null for a request that has none (interrupted, or a torn line), in the
   * order of `readRequestTimes`.
   */
  async readRequestUsages(): Promise<Array<Usage | null>> {
    const text = await readFile(this.path("events"), "utf8").catch(() => "");
    const usages: Array<Usage | null> = [];
    for (const line of text.split("\n")) {
      if (!line.includes('"type":"request"') && !line.includes('"type":"usage"')) continue;
      try {
        const event = JSON.parse(line) as { type?: string; at?: string; usage?: Usage };
        if (event.type === "request" && Number.isFinite(Date.parse(event.at ?? ""))) usages.push(null);
        else if (event.type === "usage" && usages.length > 0 && event.usage) usages[usages.length - 1] = event.usage;
      } catch {
        // a torn line: that request's usage is unknown
      }
    }
    return usages;
  }

  /**
   * The task's checkpoint: its store, with write failures named as OutputErrors. `beforeCommit`
   * runs before each boundary is written (the runner records the task's active time there, so a
   * kill loses at most one boundary's worth): a commit that fails fails before its boundary is on
   * disk, never after it.
   */
  openCheckpoint(options: CheckpointStoreOptions = {}, beforeCommit?: () => Promise<void>): TaskCheckpoint {
    return new TaskCheckpoint(new CheckpointStore(
      { sessionPath: this.path("session"), journalPath: this.path("journal"), counterPath: this.path("counter"), fingerprintPath: this.path("fingerprint") },
      options,
    ), this.dir, beforeCommit);
  }

  /**
   * Replaces the workspace by a fresh copy of the folder `from` names (or an empty folder). A
   * fixture holding what cannot be copied safely (fixture-copy.ts) is a `FixtureError` (exit 2).
   */
  async resetWorkspace(from: string | null): Promise<string> {
    const workspace = this.workspace;
    await guardOutput(workspace, "remove", () => rm(workspace, { recursive: true, force: true }));
    if (from !== null) {
      const forbidden = [await realpath(this.runDir).catch(() => this.runDir)];
      await guardOutput(workspace, "copy into", () => copyFixture(from, workspace, { forbidden }));
    } else await guardOutput(workspace, "create", () => mkdir(workspace, { recursive: true }));
    return workspace;
  }

  /** Removes the whole folder: the task starts afresh. */
  async remove(): Promise<void> {
    await guardOutput(this.dir, "remove", () => rm(this.dir, { recursive: true, force: true }));
  }
}

/**
 * A state as the one writer of a run keeps it: each change is applied to the latest state and
 * written whole, atomically, before `update` resolves — so a record of a setup command or a check
 * is on disk before the command it announces runs, and no writer overwrites another's newer
 * record with a stale copy.
 */
export class StateBook<S> {
  private writing: Promise<void> = Promise.resolve();

  constructor(private state: S, private readonly write: (state: S, durability: Durability) => Promise<void>) {}

  get current(): S {
    return this.state;
  }

  /**
   * `durability` `contents` (private-files.ts): for a record that a power cut may take back to the
   * one before — its rename is made durable by the next fsync of the folder — saving a sync.
   */
  async update(change: (state: S) => S, durability: Durability = "full"): Promise<S> {
    const next = change(this.state);
    this.state = next;
    const write = this.writing.then(() => this.write(next, durability));
    this.writing = write.catch(() => {});
    await write;
    return next;
  }
}

/**
 * A task's state book: its task-state.json. In the trial's folder with its checkpoint, whose first
 * commit (a snapshot, its folder fsynced) comes before the agent's first request: so a record
 * written with `contents` durability before the turn is durable before anything of the turn is.
 */
export class TaskStateBook extends StateBook<TaskState> {
  constructor(folder: TaskFolder, state: TaskState) {
    super(state, (next, durability) => folder.writeState(next, durability));
  }
}

/**
 * A task's checkpoint store as the runner uses it: `hook` is the commit hook to install, and a
 * commit that cannot be written is an OutputError naming the checkpoint file (or its folder
 * when the failing write did not say which file).
 */
export class TaskCheckpoint {
  constructor(private readonly store: CheckpointStore, private readonly dir: string, private readonly beforeCommit?: () => Promise<void>) {}

  load(): Promise<Session | null> {
    return this.store.load();
  }

  readonly hook: CommitHook = async (commit: Commit) => {
    // First: once the store has written the boundary, nothing may fail the commit (the engine
    // would undo what the boundary says: a call recorded as started, discarded before it ran).
    await this.beforeCommit?.();
    try {
      await this.store.commit(commit);
    } catch (err) {
      throw asOutputError(err, this.fileOf(err), "write");
    }
  };

  close(): Promise<void> {
    return guardOutput(this.store.journalPath, "write", () => this.store.close());
  }

  private fileOf(err: unknown): string {
    const path = (err as { path?: unknown } | null)?.path;
    if (typeof path !== "string") return this.dir;
    // An atomic write writes `session.json.<n>` first: name the file meant.
    if (path.startsWith(this.store.sessionPath)) return this.store.sessionPath;
    return path;
  }
}

/** A result's task and trial, as errors name it. */
function resultName(result: TaskResult): string {
  return result.trial === undefined ? taskKey(result) : `${taskKey(result)} trial ${result.trial.variant ?? NO_VARIANT_FOLDER}/${result.trial.repeat}`;
}

/** A suite or id as one path segment: it becomes a folder name, so it may not climb or nest. */
function plainName(name: string): string {
  if (name === "" || name === "." || name === ".." || /[/\\\0]/.test(name)) {
    throw new RhemaError("invalid_input", `Expected a task's suite and id to be plain names (no "/", not "." or ".."), got "${name}"`);
  }
  return name;
}
