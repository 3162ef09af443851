/**
 * `rhema bench replay`: replays recorded sessions — corpus files, the logs of other harnesses
 * (replay-inputs.ts) or rhema run directories — under compaction strategies and budgets through
 * the prompt-cache simulator, and prints one row per (input, strategy, budget) and a total, as a
 * table or JSON, with an optional chart; `recorded` adds the simulator's error against the bills.
 */
import { resolve } from "node:path";
import type { Argv } from "yargs";
import type { CacheRules } from "../cache/prompt-cache-simulator.js";
import { RhemaError } from "../core/errors.js";
import type { Usage } from "../core/provider.js";
import { PRICE_TABLE, loadPriceTable } from "../runner/pricing/prices.js";
import { STRATEGY_NAMES } from "../transcript/compaction-plan.js";
import { runSweep, type ReplayStrategy, type SweepResult, type SweepRow } from "../transcript/replay-sweep.js";
import { REPLAY_TTLS, type ReplayTtl } from "../transcript/replay.js";
import { loadReplayInputs, type ReadInput } from "./replay-inputs.js";
import { fixedNoNegativeZero, renderSimulatorErrors, simulatorErrorsJson } from "./replay-error-table.js";
import { EXIT_OK, type ExitCode } from "./exit-codes.js";
import { print, type CliIo } from "./io.js";
import { withExamples } from "./help-format.js";
import { renderReplayChart } from "./replay-chart.js";
import { loadPricingFile } from "../runner/pricing/pricing-file.js";
import { guardOutput } from "../runner/run-dir/output-guard.js";
import { checkOutputApart, probeOutputFile } from "./output-file.js";
import { loadCalibrationFile } from "../runner/plan/calibration-input.js";
import { counterOfCalibration } from "../tokens/calibration-file.js";

/** The options of `bench replay`, declared once. */
export function benchReplayOptions<T>(y: Argv<T>) {
  return withExamples(y, [
    ["$0 bench replay bench/corpus/scripted --chain --budget 8000 --budget 16000", "compare the strategies on the corpus as one long session"],
    ["$0 bench replay .rhema/runs/latest --strategy sections --chart replay.svg", "what last night's run would have cost under other budgets"],
    ["$0 bench replay ~/.claude/projects/app/S.jsonl --strategy recorded", "the simulator's error against a session's bills"],
  ])
    .positional("inputs", { type: "string", array: true, demandOption: true, describe: "session files (replay corpus, Claude Code, Codex rollout, mini-swe-agent; the format is detected) or folders of them, or rhema run directories" })
    .option("strategy", { type: "string", array: true, default: [], describe: "sections | summarize-all | keep-recent | none | recorded (the requests as the harness sent them, with the simulator's error against the bills) (repeatable; default all but recorded)" })
    .option("budget", { type: "string", array: true, default: [], describe: "budget in tokens (repeatable; default 32000 64000 128000)" })
    .option("block", { type: "string", describe: "section size in tokens (default: a tenth of the budget, at most 8000)" })
    .option("cache", { type: "string", choices: ["anthropic", "openai"], describe: "the provider whose cache rules apply (default: each session's own — openai for Codex — else anthropic)" })
    .option("model", { type: "string", describe: "price the requests in dollars as this model (its cache minimum applies too)" })
    .option("pricing", { type: "string", describe: "pricing file: prices for --model beyond (or instead of) the bundled table's" })
    .option("ttl", { type: "string", describe: "the cache marks' TTL: 5m | 1h | auto (chosen per request as the engine does; the oracle that knows each next gap is printed apart) | oracle (default 5m; recorded: as each session was billed)" })
    .option("warm-prefix", { type: "boolean", default: false, describe: "the tools and system prompt are cached before each session's first request (other sessions wrote them)" })
    .option("calibration", { type: "string", describe: "count tokens with this calibration file's factors (rhema bench calibrate) instead of 4 characters a token" })
    .option("chain", { type: "boolean", default: false, describe: "join the inputs, in order, into one long session" })
    .option("gap", { type: "string", default: "15", describe: "seconds between chained inputs" })
    .option("json", { type: "boolean", default: false, describe: "one JSON object instead of the table" })
    .option("chart", { type: "string", describe: "write an SVG chart of cost against retained context and hit rate against budget" });
}

/** The flags as given; numbers stay text until checked here, so an error can quote what was typed. */
export interface BenchReplayArgs {
  inputs: string[];
  strategy: string[];
  budget: Array<number | string>;
  block?: number | string | undefined;
  cache?: string | undefined;
  ttl?: string | undefined;
  warmPrefix?: boolean | undefined;
  model?: string | undefined;
  pricing?: string | undefined;
  calibration?: string | undefined;
  chain: boolean;
  gap: number | string;
  json: boolean;
  chart?: string;
}

export const DEFAULT_REPLAY_BUDGETS = [32_000, 64_000, 128_000];

export async function benchReplayCommand(args: BenchReplayArgs, io: CliIo): Promise<ExitCode> {
  const strategies = checkStrategies(args.strategy);
  const budgets = checkBudgets(args.budget);
  const cache = args.cache === undefined ? undefined : checkCache(args.cache);
  const block = args.block === undefined ? undefined : wholeNumberFlag("--block", args.block, 1, "a whole number of tokens above 0");
  const gapSeconds = secondsFlag("--gap", args.gap);
  const ttl = checkTtl(args.ttl ?? "5m", cache);
  let price: ((usage: Usage) => number | null) | undefined;
  if (args.pricing !== undefined && args.model === undefined) throw new RhemaError("usage", "--pricing prices --model's requests: name the model with --model");
  if (args.model !== undefined) {
    const table = await loadPriceTable(args.pricing === undefined ? [] : (await loadPricingFile(resolve(io.cwd, args.pricing))).models);
    const model = args.model;
    const provider = cache ?? "anthropic";
    if (!table.knows(provider, model)) throw new RhemaError("usage", `--model ${JSON.stringify(model)}: no price is known for it at ${provider}; name a model of the price table, or add it to a pricing file (--pricing)`);
    price = (usage) => {
      const p = table.price(provider, model, usage);
      return p.priced ? p.usd : null;
    };
  }
  const calibration = args.calibration === undefined ? null : await loadCalibrationFile(resolve(io.cwd, args.calibration));
  const counter = calibration === null ? null : counterOfCalibration(calibration);
  const { inputs, read } = await loadReplayInputs(args.inputs.map((p) => resolve(io.cwd, p)), args.chain, gapSeconds * 1000);
  if (args.chart) {
    const chart = resolve(io.cwd, args.chart);
    await checkOutputApart("--chart", chart, args.inputs.map((p) => resolve(io.cwd, p)));
    await guardOutput(chart, "write", () => probeOutputFile(chart, io.pid));
  }
  const live = !args.json && io.stderr.isTTY === true;
  const sweep = (cacheTtl: ReplayTtl) => runSweep(inputs, {
    strategies, budgets, cacheTtl, ...(cache !== undefined ? { cache } : {}), ...(args.ttl === "5m" || args.ttl === "1h" ? { recordedTtl: args.ttl } : {}), ...(args.warmPrefix ? { warmPrefix: true } : {}), ...(block !== undefined ? { blockTokens: block } : {}),
    ...(args.model !== undefined ? { model: args.model } : {}), ...(price ? { price } : {}), ...(counter ? { counter } : {}),
    onProgress: (done, total, label) => {
      if (args.json) return;
      if (live) io.stderr.write(`\r\x1b[2Kreplay ${cacheTtl === ttl ? "" : `${cacheTtl} `}${done}/${total} ${label}`);
      else if (total > 8 && (done % Math.ceil(total / 8) === 0 || done === total)) print(io.stderr, `replay ${done}/${total} ${label}`);
    },
  });
  const result = sweep(ttl);
  // auto is judged against the choice that knew each next gap, printed apart as its upper bound.
  const oracle = ttl === "auto" ? sweep("oracle") : null;
  if (live) io.stderr.write("\r\x1b[2K");
  const grouped = args.chain || inputs.some((i) => i.sessions.length > 1);
  const labels = { model: args.model, pricingFile: args.pricing, counter: counter ? `${counter.id} (${args.calibration})` : undefined };
  if (args.json) print(io.stdout, JSON.stringify({ ttl, warmPrefix: args.warmPrefix === true, ...(counter ? { tokenCounter: counter.id } : {}), ...toJson(result, read, grouped), ...(oracle ? { oracle: toJson(oracle, read, grouped) } : {}) }));
  else {
    print(io.stdout, [renderReadInputs(read), renderTable(result, cache, { ...labels, ttl, warmPrefix: args.warmPrefix === true }), renderSimulatorErrors(result)].filter((t) => t !== "").join("\n"));
    if (oracle) print(io.stdout, `\n${ORACLE_NOTE}\n${renderTable(oracle, cache, { ...labels, ttl: "oracle", heading: false })}`);
  }
  if (args.chart) {
    const path = resolve(io.cwd, args.chart);
    await guardOutput(path, "write", () => renderReplayChart(result.total, path));
    if (!args.json) print(io.stdout, `chart: ${path}`);
  }
  return EXIT_OK;
}

const REPLAY_STRATEGIES: readonly ReplayStrategy[] = [...STRATEGY_NAMES, "recorded"];

function checkStrategies(given: readonly string[]): ReplayStrategy[] {
  const list = given.length === 0 ? [...STRATEGY_NAMES] : given;
  for (const s of list) {
    if (!(REPLAY_STRATEGIES as readonly string[]).includes(s)) {
      throw new RhemaError("usage", `--strategy takes ${REPLAY_STRATEGIES.join(", ")}; got ${JSON.stringify(s)}`);
    }
  }
  return [...new Set(list)] as ReplayStrategy[];
}

function checkBudgets(given: ReadonlyArray<number | string>): number[] {
  const list = given.length === 0 ? DEFAULT_REPLAY_BUDGETS : given.map((b) => wholeNumberFlag("--budget", b, 1_000, "a whole number of tokens from 1000 up"));
  return [...new Set(list)];
}

/** A whole-number flag's value from `min` up, or exit 2 quoting what was given. */
function wholeNumberFlag(flag: string, value: number | string, min: number, rule: string): number {
  const text = String(value).trim();
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min) throw new RhemaError("usage", `${flag} takes ${rule}, got ${JSON.stringify(String(value))}`);
  return n;
}

/** A number of seconds from 0 up (`15`, `2.5`), or exit 2 quoting what was given. */
function secondsFlag(flag: string, value: number | string): number {
  const text = String(value).trim();
  const n = /^\d+(?:\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(n)) throw new RhemaError("usage", `${flag} takes a number of seconds from 0 up, got ${JSON.stringify(String(value))}`);
  return n;
}

function checkTtl(given: string, cache: CacheRules | undefined): ReplayTtl {
  if (!(REPLAY_TTLS as readonly string[]).includes(given)) throw new RhemaError("usage", `--ttl takes ${REPLAY_TTLS.join(", ")}; got ${JSON.stringify(given)}`);
  if (cache === "openai" && given !== "5m") throw new RhemaError("usage", `--ttl ${given} is for Anthropic's cache marks; OpenAI's cache has no marks (--cache openai takes --ttl 5m)`);
  return given as ReplayTtl;
}

function checkCache(given: string): CacheRules {
  if (given !== "anthropic" && given !== "openai") throw new RhemaError("usage", `--cache takes anthropic or openai, got ${JSON.stringify(given)}`);
  return given;
}

const COLUMNS: Array<[string, (r: SweepRow) => string]> = [
  ["input", (r) => r.input],
  ["strategy", (r) => r.strategy],
  ["budget", (r) => (r.budget === null ? "-" : `${r.budget / 1000}k`)],
  ["requests", (r) => String(r.figures.requests)],
  ["hit rate", (r) => fixedNoNegativeZero(r.figures.hitRate, 4)],
  ["HR*(B)", (r) => fixedNoNegativeZero(r.figures.limit, 4)],
  ["gap pts", (r) => fixedNoNegativeZero(r.figures.gapPoints, 2)],
  ["flushes (free)", (r) => `${r.figures.flushes} (${r.figures.freeFlushes})`],
  ["merges", (r) => String(r.figures.summaryMerges)],
  ["peak tok", (r) => String(r.figures.peakRequestTokens)],
  ["retained", (r) => fixedNoNegativeZero(r.figures.retainedContext, 3)],
  ["worker tok", (r) => String(r.figures.workerTokens)],
  ["billed-eq (worker)", (r) => `${Math.round(r.figures.billedEquivalent)} (${Math.round(r.figures.workerBilledEquivalent)})`],
  ["cost/retained", (r) => String(Math.round(r.figures.costPerRetained))],
  ["re-write waste", (r) => String(Math.round(r.figures.rewriteWaste))],
  ["min raw tail", (r) => (r.figures.minRawTailShare === null ? "-" : fixedNoNegativeZero(r.figures.minRawTailShare, 3))],
];

export { fixedNoNegativeZero };

const COST_COLUMN: [string, (r: SweepRow) => string] = ["cost $", (r) => (r.figures.costUsd === null ? "unpriced" : fixedNoNegativeZero(r.figures.costUsd, 2))];

const TTL_COLUMNS: Array<[string, (r: SweepRow) => string]> = [
  ["1h requests", (r) => String(r.figures.oneHourRequests)],
  ["TTL right", (r) => `${r.figures.ttlChoicesRight}/${r.figures.ttlChoicesRight + r.figures.ttlChoicesWrong}`],
];

const ORACLE_NOTE = "oracle: the TTL that knows each next gap from the recorded times (1h exactly when it is over 5 minutes and at most an hour), an upper bound for auto, which never reads them";

/**
 * How a table is headed: the model its dollars price as and the pricing file, the token counter
 * (default chars/4), the TTL its replay used (default 5m), whether the prefix was warm, whether
 * to print the heading lines (default yes).
 */
export interface TableSetting {
  model?: string | undefined;
  pricingFile?: string | undefined;
  counter?: string | undefined;
  ttl?: ReplayTtl;
  warmPrefix?: boolean;
  heading?: boolean;
}

export function renderTable(result: SweepResult, cache: CacheRules | undefined, setting: TableSetting = {}): string {
  const { model, pricingFile, ttl = "5m", warmPrefix = false, heading = true } = setting;
  const rows = [...result.rows, ...(result.rows.length > result.total.length ? result.total : [])];
  const columns = [...COLUMNS, ...(ttl === "5m" ? [] : TTL_COLUMNS), ...(model === undefined ? [] : [COST_COLUMN])];
  const cells = rows.map((r) => columns.map(([, cell]) => cell(r)));
  const widths = columns.map(([head], k) => Math.max(head.length, ...cells.map((c) => c[k]!.length)));
  const line = (values: string[]) => values.map((v, k) => (k < 2 ? v.padEnd(widths[k]!) : v.padStart(widths[k]!))).join("  ");
  return [
    ...(heading ? [`cache rules: ${cache ?? "each session's own (anthropic where its format does not say)"}; TTL: ${ttl}${warmPrefix ? "; tools+system warm before the first request" : ""}; token counter: ${setting.counter ?? "estimate, 4 characters a token"}; billed-equivalent = input + 1.25 × 5-minute writes + 2 × 1-hour writes + 0.1 × reads (worker included)`] : []),
    ...(model === undefined || !heading ? [] : [`priced as ${model} (${PRICE_TABLE.source} ${PRICE_TABLE.version}${pricingFile === undefined ? "" : `, overridden by ${pricingFile}`}), each request on its own`]),
    line(columns.map(([head]) => head)),
    ...cells.map(line),
  ].join("\n");
}

function toJson(result: SweepResult, read: readonly ReadInput[], grouped: boolean) {
  const row = (r: SweepRow) => {
    const { stats: _stats, ...figures } = r.figures;
    return { input: r.input, strategy: r.strategy, budget: r.budget, ...figures, ...simulatorErrorsJson(r) };
  };
  return { inputs: read.map(inputJson), total: result.total.map(row), [grouped ? "suites" : "files"]: result.rows.map(row) };
}

function inputJson(input: ReadInput) {
  return {
    input: input.name, format: input.format,
    sessions: input.sessions.map((s) => ({
      name: s.name, requests: s.requests.length, billedRequests: s.requests.filter((r) => r.billed).length,
      prefixTokens: s.prefixTokens ?? 0, skipped: s.skipped ?? {},
    })),
  };
}

/** One line per input read: its format, its sessions, what was skipped. */
function renderReadInputs(read: readonly ReadInput[]): string {
  return read.map((input) => {
    const skipped = new Map<string, number>();
    for (const s of input.sessions) for (const [kind, n] of Object.entries(s.skipped ?? {})) skipped.set(kind, (skipped.get(kind) ?? 0) + n);
    const sessions = input.sessions.length === 1 ? "" : `, ${input.sessions.length} sessions`;
    const billed = input.sessions.reduce((n, s) => n + s.requests.filter((r) => r.billed).length, 0);
    const bills = billed === 0 ? "" : `, ${billed} billed requests`;
    const prefix = input.sessions.some((s) => (s.prefixTokens ?? 0) > 0) ? `, hidden prefix ${input.sessions.map((s) => s.prefixTokens ?? 0).join("/")} tokens` : "";
    const skips = skipped.size === 0 ? "" : `; skipped ${[...skipped].map(([kind, n]) => `${kind} ${n}`).join(", ")}`;
    return `read ${input.name}: ${input.format}${sessions}${bills}${prefix}${skips}`;
  }).join("\n");
}

