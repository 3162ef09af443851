/**
 * A trial's cassette (issue 25): `rhema run --cassette DIR` keeps each trial's model exchanges in
 * `DIR/<suite>/<id>/<variant|default>/<n>.jsonl`, and this module puts the providers that record
 * to it or replay from it (providers/cassette.ts) around the trial's model and compaction worker.
 *
 *   record          every exchange appended as it completes; a resumed trial continues its
 *                   cassette, a trial started afresh replaces it (the header's `trialStartedAt`)
 *   strict          every request answered from the cassette; a miss fails the trial (no key needed)
 *   hybrid          a miss, and the rest of the trial, go to the live model; nothing is stored
 *   record-missing  as hybrid, and what went live is appended
 *
 * A replayed answer reports the recorded usage, or with `--cassette-usage simulate` the cache
 * simulator's for the request as sent now (below).
 *
 * The file is opened at the trial's first request, not before: a trial whose result is kept, or
 * whose setup fails, touches no cassette. What is volatile in the trial's requests (its
 * workspace's path, the run directory's) is named here, so a replay in another run directory
 * keys its requests as the recording did.
 */
import { join } from "node:path";
import { readdir, realpath } from "node:fs/promises";
import type { ModelProvider, ModelRequest, Usage } from "../../core/provider.js";
import { PromptCacheSimulator, type CacheRules } from "../../cache/prompt-cache-simulator.js";
import type { CassetteExchange } from "../../core/cassette-exchange.js";
import { isNamedProvider, providerEntry } from "../../providers/provider-registry.js";
import { CassetteMissError, recordingProvider, replayingProvider, type CassetteKeying, type ReplayMode } from "../../providers/cassette.js";
import type { VolatileParts } from "../../providers/cassette-request.js";
import { CASSETTE_VERSION, CassetteWriter, readCassette, type Cassette } from "../../store/cassette-file.js";
import type { LockGuard } from "../run-dir/run-lock.js";
import type { TrialKey } from "../trials/trial-key.js";
import { cassettePath } from "../trials/cassette-path.js";
import { readCassetteUse, writeCassetteUse, type CassetteMiss, type CassetteUse } from "../run-dir/cassette-use.js";

export type CassetteMode = "record" | ReplayMode;
export const CASSETTE_MODES: readonly CassetteMode[] = ["record", "strict", "hybrid", "record-missing"];

export type CassetteUsage = "recorded" | "simulate";
export const CASSETTE_USAGES: readonly CassetteUsage[] = ["recorded", "simulate"];

/** `--cassette DIR` (absolute), its mode and `--cassette-usage` as the run settled them. */
export interface CassetteSettings {
  dir: string;
  /** One cassette every trial answers from (a task's `model.path` naming a file), instead of each trial's under `dir`. */
  file?: string;
  mode: CassetteMode;
  /** What a replayed answer's usage is: the recorded one (default), or the cache simulator's for the request as sent now. */
  usage?: CassetteUsage;
  /** A recording's hold on the folder (cassette-lock.ts), confirmed before each exchange is written. */
  recorder?: LockGuard;
}

/** How deep a cassette lies under DIR: `<suite>/<id>/<variant>/<n>.jsonl`. */
const CASSETTE_DEPTH = 4;

/**
 * The cassettes under `dir`, sorted: the `.jsonl` files at a trial's depth, found breadth-first
 * (never deeper), at most `limit` of them (1: whether the folder holds any).
 */
export async function cassetteFilesUnder(dir: string, limit = Infinity): Promise<string[]> {
  const found: string[] = [];
  let level = [dir];
  for (let depth = 1; depth <= CASSETTE_DEPTH && level.length > 0; depth++) {
    const next: string[] = [];
    for (const folder of level.sort()) {
      for (const entry of await readdir(folder, { withFileTypes: true })) {
        const path = join(folder, entry.name);
        if (depth === CASSETTE_DEPTH && entry.isFile() && entry.name.endsWith(".jsonl")) found.push(path);
        else if (depth < CASSETTE_DEPTH && entry.isDirectory()) next.push(path);
        if (found.length >= limit) return found.sort();
      }
    }
    level = next;
  }
  return found.sort();
}

export interface TrialCassetteContext {
  key: TrialKey;
  /** The trial's task state's `startedAt`: which recording a cassette on disk belongs to. */
  trialStartedAt: string;
  /** The paths that differ between runs of the same trial. */
  workspace: string;
  runDir: string;
  /** Where a replay records which exchanges it used (the trial folder's cassette-used.json). */
  usedFile: string;
  /** The task's own patterns to make stable (`cassette.normalise`), checked when the task file was read. */
  normalise?: readonly string[];
  redact(text: string): string;
  now(): Date;
  /** Told once when a replay's miss sends the rest of the trial to the live model. */
  onLive(reason: string): void;
}

/** The trial's cassette as its providers use it; `close` releases the file. */
export interface TrialCassette {
  readonly path: string;
  /** `live` wrapped: the trial's model (`who` absent) or its compaction worker. */
  wrap(live: ModelProvider, who?: "worker"): ModelProvider;
  /** A replay's: when the recorded trial started (its session began then); null when recording or with no recorded start. */
  recordedStart(): Promise<string | null>;
  close(): Promise<void>;
}

export function openTrialCassette(settings: CassetteSettings, context: TrialCassetteContext): TrialCassette {
  const path = settings.file ?? cassettePath(settings.dir, context.key);
  const volatile = volatileParts(context);
  let writer: Promise<CassetteWriter> | null = null;
  let recorded: Promise<Cassette | null> | null = null;
  let wentLive = false;
  const use = useRecord(context.usedFile, context.trialStartedAt);
  const keying = async (live: ModelProvider, who: "worker" | undefined): Promise<CassetteKeying> => ({
    ...providerAndModel(live.id), volatile: await volatile, redact: context.redact, ...(who ? { who } : {}),
  });
  const sink = (live: ModelProvider) => ({
    append: async (exchange: Omit<CassetteExchange, "exchange">) => {
      await settings.recorder?.confirm();
      writer ??= CassetteWriter.open(path, {
        cassette: CASSETTE_VERSION, ...providerAndModel(live.id), recordedAt: context.now().toISOString(), trialStartedAt: context.trialStartedAt,
      }, (kept) => kept.trialStartedAt === context.trialStartedAt);
      const written = await (await writer).append(exchange);
      // What record-missing appends, the next replay answers from: it is kept by a prune.
      if (settings.mode === "record-missing") use.add(written.exchange);
      return written;
    },
  });
  const replayed = (): Promise<Cassette | null> => recorded ??= readCassette(path);
  return {
    path,
    wrap(live, who) {
      // Made at the first request: the cassette is read (or opened for writing) only by a trial that asks.
      let inner: ModelProvider | null = null;
      const made = async (): Promise<ModelProvider> => {
        if (inner !== null) return inner;
        const keyed = await keying(live, who);
        if (settings.mode === "record") {
          inner = recordingProvider(live, sink(live), keyed);
        } else {
          const exchanges = (await replayed())?.exchanges ?? [];
          if (exchanges.length === 0 && settings.mode === "strict") throw new CassetteMissError(`no recorded exchanges at ${path}: record the trial first (--cassette-mode record)`);
          inner = replayingProvider({
            id: live.id, exchanges, keying: keyed, mode: settings.mode, live,
            ...(settings.mode === "record-missing" ? { sink: sink(live) } : {}),
            earlier: await use.earlier(),
            onUsed: (n) => use.add(n),
            onMiss: (miss) => use.missed({ ...miss, ...(who ? { who } : {}) }),
            ...(settings.usage === "simulate" ? { usage: simulatedUsage(keyed, context.now) } : {}),
            onLive: (reason) => {
              if (wentLive) return;
              wentLive = true;
              context.onLive(reason);
            },
          });
        }
        return inner;
      };
      return {
        id: live.id,
        ...(live.answersFromScript === true ? { answersFromScript: true } : {}),
        async *stream(req, signal) {
          yield* (await made()).stream(req, signal);
        },
      };
    },
    async recordedStart() {
      return settings.mode === "record" ? null : (await replayed())?.header.trialStartedAt ?? null;
    },
    async close() {
      if (writer !== null) await (await writer.catch(() => null))?.close();
      await use.settled();
    },
  };
}

/**
 * The trial's cassette-used.json: the exchanges a replay used, written after each one (a kill
 * loses none already answered) and added to what the trial's earlier runs used — unless the record
 * is of another start of the trial — and its first miss. A write that fails is thrown at `settled`.
 */
function useRecord(file: string, trialStartedAt: string): {
  earlier(): Promise<ReadonlySet<number>>;
  add(exchange: number): void;
  missed(miss: CassetteMiss): void;
  settled(): Promise<void>;
} {
  let record: Promise<Omit<CassetteUse, "version">> | null = null;
  const read = () => record ??= readCassetteUse(file).then((kept) =>
    kept !== null && (kept.trialStartedAt ?? trialStartedAt) === trialStartedAt ? kept : { used: [] })
    .then((kept) => ({ ...kept, trialStartedAt }));
  let writes: Promise<void> = Promise.resolve();
  let failure: { error: unknown } | null = null;
  // Chained, so the record is read once and written in order; a failure is kept for `settled`, not left unhandled.
  const change = (how: (use: Omit<CassetteUse, "version">) => boolean) => {
    writes = writes.then(async () => {
      const use = await read();
      if (how(use)) await writeCassetteUse(file, use);
    }).catch((error: unknown) => {
      failure ??= { error };
    });
  };
  return {
    async earlier() {
      return new Set((await read()).used);
    },
    add(exchange) {
      change((use) => {
        if (use.used.includes(exchange)) return false;
        use.used = [...use.used, exchange];
        return true;
      });
    },
    missed(miss) {
      change((use) => {
        if (use.miss !== undefined) return false;
        use.miss = miss;
        return true;
      });
    },
    async settled() {
      await writes;
      if (failure !== null) throw failure.error;
    },
  };
}

/** The cache rules of a recorded provider (the registry's; Anthropic's for one it does not name). */
function cacheRulesOf(provider: string): CacheRules {
  return (isNamedProvider(provider) ? providerEntry(provider).cacheRules : null) ?? "anthropic";
}

/**
 * `--cassette-usage simulate`: each replayed answer's usage recomputed by the prompt-cache
 * simulator (the provider's rules; chars4 counts, as a scripted model's) for the request as sent
 * now, with the recorded output. The simulator's clock is the replay's, plus the model time the
 * replay skipped (each recorded exchange's `totalMs`), so its TTLs see the recording's pauses. A
 * resumed trial starts with an empty simulated cache.
 */
function simulatedUsage(keying: CassetteKeying, now: () => Date): (req: ModelRequest, recorded: CassetteExchange) => Usage {
  const simulator = new PromptCacheSimulator({
    rules: cacheRulesOf(keying.provider), ...(keying.model !== null ? { model: keying.model } : {}),
  });
  let skippedMs = 0;
  return (req, recorded) => {
    const input = simulator.observe(req, now().getTime() + skippedMs);
    skippedMs += recorded.timing.totalMs;
    const output = recorded.usage;
    return { ...input, outputTokens: output?.outputTokens ?? 0, ...(output?.reasoningTokens !== undefined ? { reasoningTokens: output.reasoningTokens } : {}) };
  };
}

/** `anthropic:claude-…` as the cassette names it (a scripted model's id names its task). */
function providerAndModel(id: string): { provider: string; model: string | null } {
  const colon = id.indexOf(":");
  return colon < 0 ? { provider: id, model: null } : { provider: id.slice(0, colon), model: id.slice(colon + 1) };
}

/** The workspace and the run directory, as given and as resolved (a tool may print either). */
async function volatileParts(context: TrialCassetteContext): Promise<VolatileParts> {
  const real = async (path: string) => realpath(path).catch(() => path);
  const [workspace, runDir] = await Promise.all([real(context.workspace), real(context.runDir)]);
  return {
    literals: [
      { name: "workspace path", value: context.workspace, placeholder: "<workspace>" },
      { name: "workspace path", value: workspace, placeholder: "<workspace>" },
      { name: "run directory", value: context.runDir, placeholder: "<run>" },
      { name: "run directory", value: runDir, placeholder: "<run>" },
    ],
    rules: (context.normalise ?? []).map((pattern, i) => ({ name: `cassette.normalise[${i}]`, pattern: new RegExp(pattern, "g"), replacement: "<normalised>" })),
  };
}
