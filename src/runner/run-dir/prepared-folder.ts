/**
 * A shared setup's folder in a run directory, `prepared/<setupHash>/` (issue 24 (c)): the one
 * owner of its paths and files —
 *
 *   workspace/           the prepared base: `workspace.from` copied, then the setup run in it;
 *                        never written once done (each trial works in a copy of its own)
 *   prepare-state.json   the fixture copied, each setup command `started`/`done` (as a task's
 *                        state records them), and the outcome: `preparing`, `done`, or
 *                        `failed` with the setup's message
 *   prepare.lock         who is preparing it now (pid, host, time); removed when done or failed
 *
 * Only one runner holds the run directory (rhema.lock), so a `prepare.lock` found when a runner
 * starts preparing was left by a killed one and is taken over; in one process the preparations
 * are single-flight (shared-setup.ts). `--restart` removes `prepared/` whole.
 */
import { execFile } from "node:child_process";
import { hostname } from "node:os";
import { mkdir, realpath, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { z } from "zod";
import { errorMessage } from "../../core/errors.js";
import { copyFixture } from "../tasks/fixture-copy.js";
import { guardOutput } from "./output-guard.js";
import { readStateFile, writeStateFile, type StateFileKind } from "./state-file.js";
import { setupRecordSchema } from "./task-state.js";

/** The run directory's folder of shared setups. */
export const PREPARED_DIR = "prepared";

const preparedStateSchema = z.strictObject({
  version: z.literal(1),
  /** What the hash is over, for people reading the folder (the hash itself is the folder's name). */
  key: z.strictObject({
    from: z.string().nullable(),
    fixtureStamp: z.string().nullable(),
    setup: z.array(z.string()),
    env: z.record(z.string(), z.string()),
    sandbox: z.string(),
    network: z.string(),
  }),
  /** `workspace.from` is copied into `workspace/`: from here on it is never made again. */
  workspaceCopied: z.boolean(),
  setup: z.array(setupRecordSchema),
  outcome: z.discriminatedUnion("status", [
    z.strictObject({ status: z.literal("preparing") }),
    z.strictObject({ status: z.literal("done"), finishedAt: z.string() }),
    z.strictObject({ status: z.literal("failed"), message: z.string(), finishedAt: z.string() }),
  ]),
});
export type PreparedState = z.infer<typeof preparedStateSchema>;
export type PreparedKey = PreparedState["key"];

const PREPARED_STATE_KIND: StateFileKind<PreparedState> = {
  schema: preparedStateSchema,
  code: "state_invalid",
  what: "a rhema shared setup's state",
  remedy: "remove its prepared/<hash>/ folder (or run with --restart) to prepare it afresh",
};

/** A shared setup that has not started. */
export function freshPreparedState(key: PreparedKey): PreparedState {
  return { version: 1, key, workspaceCopied: false, setup: [], outcome: { status: "preparing" } };
}

export class PreparedFolder {
  /** Absolute: `<runDir>/prepared/<hash>`. */
  readonly dir: string;

  constructor(private readonly runDir: string, readonly hash: string) {
    if (!/^[0-9a-f]{16,64}$/.test(hash)) throw new Error(`a prepared base's hash must be hex, got "${hash}"`);
    this.dir = join(runDir, PREPARED_DIR, hash);
  }

  /** The prepared base. */
  get workspace(): string {
    return join(this.dir, "workspace");
  }

  /** The folder as messages name it: relative to the run directory. */
  get name(): string {
    return `${PREPARED_DIR}/${this.hash}`;
  }

  private get statePath(): string {
    return join(this.dir, "prepare-state.json");
  }

  private get lockPath(): string {
    return join(this.dir, "prepare.lock");
  }

  readState(): Promise<PreparedState | null> {
    return readStateFile(this.statePath, PREPARED_STATE_KIND);
  }

  async writeState(state: PreparedState): Promise<void> {
    await guardOutput(this.dir, "create", () => mkdir(this.dir, { recursive: true, mode: 0o700 }));
    await writeStateFile(this.statePath, state);
  }

  /** Says who prepares it (a killed runner's file is overwritten: the run directory's lock is this runner's). */
  async lock(pid: number, at: string): Promise<void> {
    await guardOutput(this.dir, "create", () => mkdir(this.dir, { recursive: true, mode: 0o700 }));
    const owner = JSON.stringify({ pid, host: hostname(), since: at }) + "\n";
    await guardOutput(this.lockPath, "write", () => writeFile(this.lockPath, owner, { mode: 0o600 }));
  }

  async unlock(): Promise<void> {
    await guardOutput(this.lockPath, "remove", () => rm(this.lockPath, { force: true }));
  }

  /** Replaces the base by a fresh copy of `from` (checked like any fixture copy), or an empty folder. */
  async resetWorkspace(from: string | null): Promise<void> {
    const workspace = this.workspace;
    await guardOutput(workspace, "remove", () => rm(workspace, { recursive: true, force: true }));
    if (from !== null) {
      const forbidden = [await realpath(this.runDir).catch(() => this.runDir)];
      await guardOutput(workspace, "copy into", () => copyFixture(from, workspace, { forbidden }));
    } else await guardOutput(workspace, "create", () => mkdir(workspace, { recursive: true, mode: 0o700 }));
  }

  /**
   * Copies the prepared base to `to` (replaced if there): with `cp -a`, since the base holds what
   * the setup made (links of any kind, hard links, sparse files), copied as a per-trial setup would
   * have left it.
   */
  async copyWorkspaceTo(to: string): Promise<void> {
    await guardOutput(to, "remove", () => rm(to, { recursive: true, force: true }));
    await guardOutput(to, "copy into", async () => {
      await mkdir(dirname(to), { recursive: true, mode: 0o700 });
      await copyTree(this.workspace, to);
    });
  }

  /** Removes the whole folder: the base is prepared afresh. */
  async remove(): Promise<void> {
    await guardOutput(this.dir, "remove", () => rm(this.dir, { recursive: true, force: true }));
  }
}

function copyTree(from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("cp", ["-a", "--no-target-directory", "--", from, to], { timeout: 30 * 60_000 }, (err, _stdout, stderr) => {
      if (err === null) return resolve();
      // The errno cp met, as far as its message says: a full disk is the run's to report as such.
      const code = /No space left/.test(stderr) ? "ENOSPC" : /Disk quota/.test(stderr) ? "EDQUOT" : "EIO";
      reject(Object.assign(new Error(`cp -a ${from}: ${stderr.trim() || errorMessage(err)}`, { cause: err }), { code, path: to }));
    });
  });
}
