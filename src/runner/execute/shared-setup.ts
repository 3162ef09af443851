/**
 * Setup once per suite (issue 24 (c)): a task with `workspace: { from, setup, shared: true }`
 * does not run its setup in its own workspace. Its setup runs once in `<out>/prepared/<hash>/`
 * (prepared-folder.ts) for every task and trial whose setup would see the same things — the key:
 *
 *   the fixture's stamp    each entry's path, size, mtime and mode, not its bytes (fixture-stamp.ts)
 *   the setup commands     in order
 *   the environment        the `--allow-env` names and the matrix cell's `env`, with their values
 *                          (hashed: a secret let through is never written down)
 *   the sandbox            its mode (bwrap, none, off) and the network setting
 *
 * A changed key is another folder: the base is prepared again. Each trial then gets a copy of
 * the base (task-workspace.ts), and its changes.patch diffs against that copy as it was made, so
 * what the setup made is not in it.
 *
 * In one process the preparation is single-flight: the first trial to need a base prepares it,
 * the others wait for the same promise. Its commands resume from their records exactly as a
 * task's own setup does (task-workspace.ts `runSetupCommands`: a done command never runs again,
 * one started but not done — a kill — runs again). A failure is recorded with the setup's
 * message and fails every task naming the base with that message, without running it again — in
 * this run and the next — unless `--retry-errored`, which prepares it afresh once.
 *
 * The shared setup runs under the run's interrupt and the lock, not any one task's timeout: other
 * tasks wait for it. A task whose timeout passes meanwhile ends timed out once it is done.
 */
import { createHash } from "node:crypto";
import { RhemaError } from "../../core/errors.js";
import type { SandboxPlacement } from "../../process/sandbox.js";
import { canonicalJson } from "../tasks/content-hash.js";
import { fixtureStamp } from "../tasks/fixture-stamp.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import type { CommandEnvironment } from "../plan/task-plan.js";
import { RunDir } from "../run-dir/run-dir.js";
import { StateBook } from "../run-dir/task-folder.js";
import { freshPreparedState, type PreparedFolder, type PreparedKey, type PreparedState } from "../run-dir/prepared-folder.js";
import type { RunnerEvent } from "../run-dir/runner-events.js";
import type { CommandRunner } from "./command-runner.js";
import { runSetupCommands, type SetupBook } from "./task-workspace.js";
import { cloneAtCommit } from "./git-workspace.js";

/** What one trial brings to a shared setup: the things its key is made of, and how to run commands. */
export interface SharedSetupRequest {
  task: TaskDefinition;
  commands: CommandEnvironment;
  sandbox: { mode: string; network: string; placement: SandboxPlacement | null };
  runCommand: CommandRunner;
  /** Where the setup's events go: the trial that prepares the base (the others only wait). */
  onEvent?: (event: RunnerEvent) => void | Promise<void>;
}

export interface SharedSetupsOptions {
  now: () => Date;
  /** The run's interrupt (with the lock's loss): what stops a shared setup. */
  signal: AbortSignal;
  /** `--retry-errored`: a base whose setup failed in an earlier run is prepared afresh (once). */
  retryFailed: boolean;
  /** Who prepares, written in `prepare.lock`. */
  pid: number;
  /** The run's secret redactor: a failed setup's message is kept redacted. */
  redact(text: string): string;
}

/** The run's shared setups: one per key, prepared once. */
export class SharedSetups {
  private readonly runDir: RunDir;
  private readonly preparing = new Map<string, Promise<PreparedFolder>>();
  private readonly stamps = new Map<string, Promise<string>>();

  constructor(runDir: string, private readonly opts: SharedSetupsOptions) {
    this.runDir = new RunDir(runDir);
  }

  /** The prepared base the request names: made now, or awaited, or found done on disk. A failed one throws its setup's message. */
  async prepare(request: SharedSetupRequest): Promise<PreparedFolder> {
    return this.once(await this.keyOf(request), request);
  }

  /**
   * A layered run's base of a fixture with no shared setup: the fixture copied (and checked) once
   * into `prepared/<hash>/` for every trial that lays its layer over it (task-workspace.ts), keyed
   * by the fixture's stamp alone — no commands run in it, so the environment and sandbox are not
   * part of its key.
   */
  async fixtureBase(from: string): Promise<PreparedFolder> {
    return this.once({ from, fixtureStamp: await this.stampOf(from), setup: [], env: {}, sandbox: "none", network: "none" }, null);
  }

  /**
   * A layered run's base of a git workspace at one commit: the run's mirror cloned once into
   * `prepared/<hash>/` (git-workspace.ts), keyed by the mirror and the commit, for every trial that
   * lays its layer over it.
   */
  async gitBase(mirror: string, commit: string, hostEnv: Readonly<Record<string, string | undefined>>): Promise<PreparedFolder> {
    const key: PreparedKey = { from: mirror, fixtureStamp: `git:${commit}`, setup: [], env: {}, sandbox: "none", network: "none" };
    return this.once(key, null, (workspace) => cloneAtCommit(mirror, commit, workspace, hostEnv));
  }

  /** The base of `key`, prepared once in this process (single-flight: later callers await the first's promise). */
  private once(key: PreparedKey, request: SharedSetupRequest | null, fill?: (workspace: string) => Promise<void>): Promise<PreparedFolder> {
    const hash = preparedHash(key);
    let prepared = this.preparing.get(hash);
    if (prepared === undefined) {
      prepared = this.prepareOnce(this.runDir.prepared(hash), key, request, fill);
      this.preparing.set(hash, prepared);
    }
    return prepared;
  }

  private stampOf(from: string): Promise<string> {
    const stamp = this.stamps.get(from) ?? fixtureStamp(from);
    this.stamps.set(from, stamp);
    return stamp;
  }

  /** The key of the request's setup (see the header); the fixture is stamped once a run. */
  async keyOf(request: SharedSetupRequest): Promise<PreparedKey> {
    const { task, commands, sandbox } = request;
    const from = task.workspace.from;
    const stamp = from === null ? null : this.stampOf(from);
    const env: Record<string, string> = {};
    for (const name of commands.allowEnv) if (commands.env[name] !== undefined) env[name] = valueHash(commands.env[name]);
    for (const [name, value] of Object.entries(task.env ?? {})) env[name] = valueHash(value);
    return { from, fixtureStamp: stamp === null ? null : await stamp, setup: [...task.workspace.setup], env, sandbox: sandbox.mode, network: sandbox.network };
  }

  /**
   * Prepares `folder` for `key`: its copy of the fixture (or what `fill` puts in its workspace: a
   * git clone), then the request's setup (none for a fixture or git base, `request` null).
   */
  private async prepareOnce(folder: PreparedFolder, key: PreparedKey, request: SharedSetupRequest | null, fill?: (workspace: string) => Promise<void>): Promise<PreparedFolder> {
    const at = () => this.opts.now().toISOString();
    let state = await folder.readState();
    if (state?.outcome.status === "done") return folder;
    if (state?.outcome.status === "failed") {
      if (!this.opts.retryFailed) throw sharedSetupFailed(folder, state.outcome.message);
      await folder.remove();
      state = null;
    }
    const book = preparedBook(folder, state ?? freshPreparedState(key));
    await folder.writeState(book.current);
    await folder.lock(this.opts.pid, at());
    if (!book.current.workspaceCopied) {
      // Nothing has run in it yet: a copy cut short by a kill is made again.
      await book.update((s) => ({ ...s, setup: [] }));
      if (fill) await fill(folder.workspace);
      else await folder.resetWorkspace(key.from);
      await book.update((s) => ({ ...s, workspaceCopied: true }));
    }
    try {
      if (request !== null) await runSetupCommands(request.task, folder.workspace, book, {
        runCommand: request.runCommand, signal: this.opts.signal, now: this.opts.now,
        ...(request.onEvent ? { onEvent: request.onEvent } : {}),
        ...(request.sandbox.placement ? { sandbox: { ...request.sandbox.placement, network: true } } : {}),
      });
    } catch (err) {
      if (!(err instanceof RhemaError && err.code === "setup_failed")) throw err;
      const message = this.opts.redact(err.message);
      await book.update((s) => ({ ...s, outcome: { status: "failed", message, finishedAt: at() } }));
      await folder.unlock();
      throw sharedSetupFailed(folder, message);
    }
    await book.update((s) => ({ ...s, outcome: { status: "done", finishedAt: at() } }));
    await folder.unlock();
    return folder;
  }
}

/** The folder name of a key: 24 hex digits of its sha256. */
export function preparedHash(key: PreparedKey): string {
  return createHash("sha256").update(canonicalJson(key)).digest("hex").slice(0, 24);
}

function valueHash(value: string): string {
  return `sha256:${createHash("sha256").update(value).digest("hex").slice(0, 16)}`;
}

/** Every task naming a failed base fails with its setup's message, the base named. */
function sharedSetupFailed(folder: PreparedFolder, message: string): RhemaError {
  return new RhemaError("setup_failed", `shared setup (${folder.name}): ${message}`);
}

/** A shared setup's state, each change written whole before `update` resolves (like a task's state book). */
function preparedBook(folder: PreparedFolder, state: PreparedState): SetupBook<PreparedState> {
  return new StateBook(state, (next) => folder.writeState(next));
}
