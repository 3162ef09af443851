/**
 * The recorded sessions of a run directory, for `rhema bench replay`: each task's checkpointed
 * conversation and the times its model requests were sent, as replay sessions — one per trial
 * of a layout-2 run (`tasks/<suite>/<id>/<variant|default>/<n>/`), each with the matrix cell it
 * ran as; and, for `rhema bench calibrate`, each request as sent with the usage it was billed. A
 * trial that ran against a real provider carries each request's usage as the provider reported it
 * (its bill) and that provider's cache rules; a scripted one's usage was the simulator's own, no
 * bill. Read-only: nothing in the run directory changes.
 */
import type { CacheRules } from "../../cache/prompt-cache-simulator.js";
import { CodingAgent } from "../../agent.js";
import { RhemaError } from "../../core/errors.js";
import { providerNameOf, type ModelProvider } from "../../core/provider.js";
import type { Session } from "../../core/session.js";
import type { ToolSpec } from "../../core/tool.js";
import { isNamedProvider, providerEntry } from "../../providers/provider-registry.js";
import { sessionFromLog, type ReplaySession } from "../../transcript/replay-session.js";
import type { CalibrationSample } from "../../tokens/calibration-fit.js";
import { RunDir } from "./run-dir.js";
import { plannedTrials, type ManifestTask } from "./run-manifest.js";
import type { TaskFolder } from "./task-folder.js";
import { taskKey } from "../tasks/task-key.js";
import { trialLabel } from "../trials/trial-key.js";

export interface RecordedSession {
  suite: string;
  id: string;
  /** The matrix cell the trial ran as (its variant); null: the task as written, or a layout-1 run. */
  variant: string | null;
  session: ReplaySession;
}

/**
 * The system prompt and tools the task's requests carried, rendered as the agent renders them
 * from the saved environment report; without its workspace, the report alone.
 */
function requestPrefix(session: Session, workspace: string): { system: string | null; tools: ToolSpec[] } {
  try {
    const agent = CodingAgent.fromSession(NO_MODEL, { workspace, transcript: false }, session);
    return { system: agent.system(), tools: agent.toolSpecs() };
  } catch {
    return { system: session.environment ?? null, tools: [] };
  }
}

/** A provider id (`anthropic:claude-sonnet-4-6`) that names a real provider: its cache rules when they are known. */
function liveProvider(id: string | undefined): { cache: CacheRules | null } | null {
  const name = id === undefined ? "" : providerNameOf(id);
  if (!isNamedProvider(name)) return null;
  return { cache: providerEntry(name).cacheRules };
}

/** Replays never call a model. */
const NO_MODEL: ModelProvider = {
  id: "replay:none",
  stream() {
    throw new Error("a replay sends no requests");
  },
};

export async function readRunDirSessions(path: string): Promise<RecordedSession[]> {
  const out: RecordedSession[] = [];
  const { manifest, trials } = await trialSessions(path);
  for await (const { ref, name, folder, session } of trials) {
    const times = await folder.readRequestTimes();
    const prefix = requestPrefix(session, folder.workspace);
    const replay: ReplaySession = { ...sessionFromLog(name, prefix.system, session.messages, times), tools: prefix.tools, format: "rhema-run" };
    const live = liveProvider((await folder.readResult().catch(() => null))?.provider);
    if (live) {
      const usages = await folder.readRequestUsages();
      replay.requests = replay.requests.map((r, k) => (usages[k] ? { ...r, billed: usages[k]! } : r));
      if (live.cache) replay.cache = live.cache;
    }
    out.push({ suite: ref.suite, id: ref.id, variant: ref.variant ?? null, session: replay });
  }
  return sortByCell(out, manifest.variants ?? []);
}

/** Each trial of a run directory that holds a conversation, in the manifest's order, with its folder and session. */
async function trialSessions(path: string) {
  const runDir = new RunDir(path);
  const manifest = await runDir.readManifest();
  if (!manifest) throw new RhemaError("invalid_input", `${path}: not a run directory (no manifest.json)`);
  const hasVariants = (manifest.variants ?? []).length > 0;
  async function* trials() {
    for (const ref of manifest!.tasks) {
      const folders = manifest!.layout === 2 ? manifestTrialFolders(runDir, ref, hasVariants) : [{ folder: runDir.task(ref), name: taskKey(ref) }];
      for (const { folder, name } of folders) {
        const session = await folder.openCheckpoint().load();
        if (session && session.messages.length > 0) yield { ref, name, folder, session };
      }
    }
  }
  return { manifest, trials: trials() };
}

/** What a run directory gives `bench calibrate`: its samples, and the trials it could not use and why. */
export interface RunDirSamples {
  samples: CalibrationSample[];
  skipped: string[];
}

/**
 * Each answered request of each trial as sent — the system prompt, tools and the log up to it —
 * with the usage it reported. A trial whose transcript was compacted is skipped (its requests
 * were views, not the log's prefixes), as is one whose usages do not pair with its steps.
 */
export async function readRunDirBilledSamples(path: string): Promise<RunDirSamples> {
  const out: RunDirSamples = { samples: [], skipped: [] };
  const { trials } = await trialSessions(path);
  for await (const { name, folder, session } of trials) {
    if ((session.transcript?.stats?.flushes ?? 0) > 0) {
      out.skipped.push(`${name}: compacted (its requests were not the log's prefixes)`);
      continue;
    }
    const usages = await folder.readRequestUsages();
    const replay = sessionFromLog(name, null, session.messages, []);
    if (usages.length !== replay.requests.length) {
      out.skipped.push(`${name}: ${usages.length} usages for ${replay.requests.length} answered requests`);
      continue;
    }
    const prefix = requestPrefix(session, folder.workspace);
    const session_ = `${path}#${name}`;
    replay.requests.forEach(({ logLength }, i) => {
      const billed = usages[i];
      if (billed) out.samples.push({ session: session_, system: prefix.system, tools: prefix.tools, messages: session.messages.slice(0, logLength), billed });
    });
  }
  return out;
}

/**
 * Suite by suite, each suite's cells in the matrix's order (the manifest's `variants`; the task as
 * written first), and within a cell the manifest's order of tasks and repeats. The sort is stable.
 */
function sortByCell(sessions: RecordedSession[], variants: readonly string[]): RecordedSession[] {
  const rank = (variant: string | null) => (variant === null ? -1 : variants.indexOf(variant));
  return sessions.sort((a, b) => (a.suite < b.suite ? -1 : a.suite > b.suite ? 1 : rank(a.variant) - rank(b.variant)));
}

/** A layout-2 task's trial folders, each named by its trial's label (`suite/id`, `suite/id#3`, `suite/id@transcript=8k#2`). */
function manifestTrialFolders(runDir: RunDir, ref: ManifestTask, variants: boolean): { folder: TaskFolder; name: string }[] {
  const repeats = ref.trials ?? 1;
  return plannedTrials(ref).map((key) => ({ folder: runDir.trial(key), name: trialLabel(key, { repeats, variants }) }));
}
