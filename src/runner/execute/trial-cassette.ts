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
 * The file is opened at the trial's first request, not before: a trial whose result is kept, or
 * whose setup fails, touches no cassette. What is volatile in the trial's requests (its
 * workspace's path, the run directory's) is named here, so a replay in another run directory
 * keys its requests as the recording did.
 */
import { join } from "node:path";
import { realpath } from "node:fs/promises";
import type { ModelProvider } from "../../core/provider.js";
import type { CassetteExchange } from "../../core/cassette-exchange.js";
import { CassetteMissError, recordingProvider, replayingProvider, type CassetteKeying, type ReplayMode } from "../../providers/cassette.js";
import type { VolatileParts } from "../../providers/cassette-request.js";
import { CassetteWriter, readCassette } from "../../store/cassette-file.js";
import { trialFolderSegments, type TrialKey } from "../trials/trial-key.js";
import { readCassetteUse, writeCassetteUse } from "../run-dir/cassette-use.js";

export type CassetteMode = "record" | ReplayMode;
export const CASSETTE_MODES: readonly CassetteMode[] = ["record", "strict", "hybrid", "record-missing"];

/** `--cassette DIR` (absolute) and its mode as the run settled it. */
export interface CassetteSettings {
  dir: string;
  mode: CassetteMode;
}

/** Where trial `key`'s cassette lives under `dir`. */
export function cassettePath(dir: string, key: TrialKey): string {
  const [suite, id, variant, repeat] = trialFolderSegments(key);
  return join(dir, suite, id, variant, `${repeat}.jsonl`);
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
  close(): Promise<void>;
}

export function openTrialCassette(settings: CassetteSettings, context: TrialCassetteContext): TrialCassette {
  const path = cassettePath(settings.dir, context.key);
  const volatile = volatileParts(context);
  let writer: Promise<CassetteWriter> | null = null;
  let recorded: Promise<CassetteExchange[]> | null = null;
  let wentLive = false;
  const usage = usedExchanges(context.usedFile);
  const keying = async (live: ModelProvider, who: "worker" | undefined): Promise<CassetteKeying> => ({
    ...providerAndModel(live.id), volatile: await volatile, redact: context.redact, ...(who ? { who } : {}),
  });
  const sink = (live: ModelProvider) => ({
    append: async (exchange: Omit<CassetteExchange, "exchange">) => {
      writer ??= CassetteWriter.open(path, {
        cassette: 1, ...providerAndModel(live.id), recordedAt: context.now().toISOString(), trialStartedAt: context.trialStartedAt,
      }, (kept) => kept.trialStartedAt === context.trialStartedAt);
      const written = await (await writer).append(exchange);
      // What record-missing appends, the next replay answers from: it is kept by a prune.
      if (settings.mode === "record-missing") usage.add(written.exchange);
      return written;
    },
  });
  const replayed = async (): Promise<CassetteExchange[]> => {
    recorded ??= readCassette(path).then((cassette) => cassette?.exchanges ?? []);
    return recorded;
  };
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
          const exchanges = await replayed();
          if (exchanges.length === 0 && settings.mode === "strict") throw new CassetteMissError(`no recorded exchanges at ${path}: record the trial first (--cassette-mode record)`);
          inner = replayingProvider({
            id: live.id, exchanges, keying: keyed, mode: settings.mode, live,
            ...(settings.mode === "record-missing" ? { sink: sink(live) } : {}),
            onUsed: (n) => usage.add(n),
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
    async close() {
      if (writer !== null) await (await writer.catch(() => null))?.close();
      await usage.settled();
    },
  };
}

/**
 * The exchanges a replay used, written after each one (a kill loses none already answered),
 * added to what the trial's earlier runs used. A write that fails is thrown at `settled`.
 */
function usedExchanges(file: string): { add(exchange: number): void; settled(): Promise<void> } {
  let used: Set<number> | null = null;
  let writes: Promise<void> = Promise.resolve();
  let failure: { error: unknown } | null = null;
  return {
    add(exchange) {
      // Chained, so the record is read once and written in order; a failure is kept for `settled`, not left unhandled.
      writes = writes.then(async () => {
        used ??= new Set(await readCassetteUse(file));
        if (used.has(exchange)) return;
        used.add(exchange);
        await writeCassetteUse(file, used);
      }).catch((error: unknown) => {
        failure ??= { error };
      });
    },
    async settled() {
      await writes;
      if (failure !== null) throw failure.error;
    },
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
