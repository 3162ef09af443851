/**
 * `rhema bench replay`: replays recorded sessions — corpus files or rhema run directories —
 * under compaction strategies and budgets through the prompt-cache simulator, and prints one
 * row per (input, strategy, budget) and a total, as a table or JSON, with an optional chart.
 */
import { open, readFile, readdir, rm, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import type { Argv } from "yargs";
import type { CacheRules } from "../cache/prompt-cache-simulator.js";
import { RhemaError } from "../core/errors.js";
import type { Usage } from "../core/provider.js";
import { PRICE_TABLE, loadPriceTable } from "../runner/pricing/prices.js";
import { STRATEGY_NAMES, type StrategyName } from "../transcript/compaction-plan.js";
import { CorpusFormatError, chainSessions, parseCorpusSession, type ReplaySession } from "../transcript/replay-session.js";
import { runSweep, type SweepInput, type SweepResult, type SweepRow } from "../transcript/replay-sweep.js";
import { readRunDirSessions } from "../runner/run-dir/recorded-sessions.js";
import { RunDir } from "../runner/run-dir/run-dir.js";
import { EXIT_OK, type ExitCode } from "./exit-codes.js";
import { print, type CliIo } from "./io.js";
import { withExamples } from "./help-format.js";
import { renderReplayChart } from "./replay-chart.js";
import { loadPricingFile } from "../runner/pricing/pricing-file.js";
import { readRegularFile } from "../store/input-file.js";
import { guardOutput } from "../runner/run-dir/output-guard.js";
import { probeInto, reportDestination } from "../runner/reports/report-destination.js";
import { canonicalPath, isWithinOrSame } from "../runner/tasks/canonical-path.js";
import { loadCalibrationFile } from "../runner/plan/calibration-input.js";
import { counterOfCalibration } from "../tokens/calibration-file.js";

/** The options of `bench replay`, declared once. */
export function benchReplayOptions<T>(y: Argv<T>) {
  return withExamples(y, [
    ["$0 bench replay bench/corpus/scripted --chain --budget 8000 --budget 16000", "compare the strategies on the corpus as one long session"],
    ["$0 bench replay .rhema/runs/latest --strategy sections --chart replay.svg", "what last night's run would have cost under other budgets"],
  ])
    .positional("inputs", { type: "string", array: true, demandOption: true, describe: "corpus .jsonl files or folders, or rhema run directories" })
    .option("strategy", { type: "string", array: true, default: [], describe: "sections | summarize-all | keep-recent | none (repeatable; default all)" })
    .option("budget", { type: "string", array: true, default: [], describe: "budget in tokens (repeatable; default 32000 64000 128000)" })
    .option("block", { type: "string", describe: "section size in tokens (default: a tenth of the budget, at most 8000)" })
    .option("cache", { type: "string", default: "anthropic", choices: ["anthropic", "openai"], describe: "the provider whose cache rules apply" })
    .option("model", { type: "string", describe: "price the requests in dollars as this model (its cache minimum applies too)" })
    .option("pricing", { type: "string", describe: "pricing file: prices for --model beyond (or instead of) the bundled table's" })
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
  cache: string;
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
  const cache = checkCache(args.cache);
  const block = args.block === undefined ? undefined : wholeNumberFlag("--block", args.block, 1, "a whole number of tokens above 0");
  const gapSeconds = secondsFlag("--gap", args.gap);
  let price: ((usage: Usage) => number | null) | undefined;
  if (args.pricing !== undefined && args.model === undefined) throw new RhemaError("usage", "--pricing prices --model's requests: name the model with --model");
  if (args.model !== undefined) {
    const table = await loadPriceTable(args.pricing === undefined ? [] : (await loadPricingFile(resolve(io.cwd, args.pricing))).models);
    const model = args.model;
    if (!table.knows(cache, model)) throw new RhemaError("usage", `--model ${JSON.stringify(model)}: no price is known for it at ${cache}; name a model of the price table, or add it to a pricing file (--pricing)`);
    price = (usage) => {
      const p = table.price(cache, model, usage);
      return p.priced ? p.usd : null;
    };
  }
  const calibration = args.calibration === undefined ? null : await loadCalibrationFile(resolve(io.cwd, args.calibration));
  const counter = calibration === null ? null : counterOfCalibration(calibration);
  const inputs = await loadInputs(args.inputs.map((p) => resolve(io.cwd, p)), args.chain, gapSeconds * 1000);
  if (args.chart) {
    const chart = resolve(io.cwd, args.chart);
    await checkChartApart(chart, args.inputs.map((p) => resolve(io.cwd, p)));
    await guardOutput(chart, "write", () => probeChart(chart, io.pid));
  }
  const live = !args.json && io.stderr.isTTY === true;
  const result = runSweep(inputs, {
    strategies, budgets, cache, ...(block !== undefined ? { blockTokens: block } : {}),
    ...(args.model !== undefined ? { model: args.model } : {}), ...(price ? { price } : {}), ...(counter ? { counter } : {}),
    onProgress: (done, total, label) => {
      if (args.json) return;
      if (live) io.stderr.write(`\r\x1b[2Kreplay ${done}/${total} ${label}`);
      else if (total > 8 && (done % Math.ceil(total / 8) === 0 || done === total)) print(io.stderr, `replay ${done}/${total} ${label}`);
    },
  });
  if (live) io.stderr.write("\r\x1b[2K");
  if (args.json) print(io.stdout, JSON.stringify(toJson(result, args.chain || inputs.some((i) => i.sessions.length > 1))));
  else print(io.stdout, renderTable(result, cache, { model: args.model, pricingFile: args.pricing, counter: counter ? `${counter.id} (${args.calibration})` : undefined }));
  if (args.chart) {
    const path = resolve(io.cwd, args.chart);
    await guardOutput(path, "write", () => renderReplayChart(result.total, path));
    if (!args.json) print(io.stdout, `chart: ${path}`);
  }
  return EXIT_OK;
}

function checkStrategies(given: readonly string[]): StrategyName[] {
  const list = given.length === 0 ? ["sections", "summarize-all", "keep-recent", "none"] : given;
  for (const s of list) {
    if (!(STRATEGY_NAMES as readonly string[]).includes(s)) {
      throw new RhemaError("usage", `--strategy takes ${STRATEGY_NAMES.join(", ")}; got ${JSON.stringify(s)}`);
    }
  }
  return [...new Set(list)] as StrategyName[];
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

/**
 * Checks before the replay that the chart can be written where it is asked for, as `run` checks
 * its report copies: not a folder, its folder there (a missing one is not made: exit 3 naming
 * the path, before any work), a file creatable beside it. Nothing is left behind.
 */
async function probeChart(path: string, pid: number): Promise<void> {
  if ((await reportDestination(path)) === "into") return probeInto(path);
  const probe = `${path}.rhema-probe-${pid}`;
  await (await open(probe, "w")).close();
  await rm(probe, { force: true });
}

function checkCache(given: string): CacheRules {
  if (given !== "anthropic" && given !== "openai") throw new RhemaError("usage", `--cache takes anthropic or openai, got ${JSON.stringify(given)}`);
  return given;
}

/** The chart is not written into what the replay reads (by real path: a link to an input is that input). */
async function checkChartApart(chart: string, inputs: readonly string[]): Promise<void> {
  const real = await canonicalPath(chart);
  for (const input of inputs) {
    if (isWithinOrSame(await canonicalPath(input), real)) throw new RhemaError("usage", `--chart ${chart} is${real === chart ? "" : ` (by its real path ${real})`} in the input ${input}: write the chart elsewhere`);
  }
}

/** Corpus files (`X.jsonl`, with `X.times.json` beside it when there is one), corpus folders, or run directories. */
async function loadInputs(paths: readonly string[], chain: boolean, gapMs: number): Promise<SweepInput[]> {
  const inputs: SweepInput[] = [];
  for (const path of paths) {
    const info = await stat(path).catch((err: NodeJS.ErrnoException) => {
      throw new RhemaError("invalid_input", `${path}: cannot read (${err.code ?? err.message})`);
    });
    if (info.isFile()) inputs.push({ name: basename(path), sessions: [await readCorpusFile(path)] });
    else if (await isRunDir(path)) inputs.push(...await readRunDirInputs(path));
    else {
      const files = (await readdir(path)).filter((f) => f.endsWith(".jsonl")).sort();
      if (files.length === 0) throw new RhemaError("invalid_input", `${path}: neither a run directory (no manifest.json) nor a folder of corpus .jsonl files`);
      for (const f of files) inputs.push({ name: f, sessions: [await readCorpusFile(join(path, f))] });
    }
  }
  if (!chain) return inputs;
  const all = inputs.flatMap((i) => i.sessions);
  return [{ name: `chain of ${all.length}`, sessions: [chainSessions(all, gapMs)] }];
}

async function isRunDir(path: string): Promise<boolean> {
  return stat(new RunDir(path).manifestPath).then(() => true, () => false);
}

/**
 * A run directory's sessions as one input per suite — per suite and matrix cell when the run had
 * variants (`triage@transcript=8k`), since each cell ran its sessions under its own settings.
 */
async function readRunDirInputs(path: string): Promise<SweepInput[]> {
  const byGroup = new Map<string, ReplaySession[]>();
  for (const recorded of await readRunDirSessions(path)) {
    const name = recorded.variant === null ? recorded.suite : `${recorded.suite}@${recorded.variant}`;
    const list = byGroup.get(name) ?? [];
    list.push(recorded.session);
    byGroup.set(name, list);
  }
  return [...byGroup].map(([name, sessions]) => ({ name, sessions }));
}

async function readCorpusFile(path: string): Promise<ReplaySession> {
  const text = await readRegularFile(path).then((b) => b.toString("utf8"), (err: NodeJS.ErrnoException) => {
    throw new RhemaError("invalid_input", `${path}: cannot read (${err.code ?? err.message})`);
  });
  const timesPath = path.replace(/\.jsonl$/, ".times.json");
  let times: Record<string, number> | null = null;
  const timesText = await readFile(timesPath, "utf8").catch(() => null);
  if (timesText !== null) {
    try {
      times = JSON.parse(timesText) as Record<string, number>;
    } catch (err) {
      throw new RhemaError("invalid_input", `${timesPath}: not JSON: ${(err as Error).message}`);
    }
  }
  try {
    return parseCorpusSession(path, text, times);
  } catch (err) {
    if (err instanceof CorpusFormatError) throw new RhemaError("invalid_input", err.message);
    throw err;
  }
}

const COLUMNS: Array<[string, (r: SweepRow) => string]> = [
  ["input", (r) => r.input],
  ["strategy", (r) => r.strategy],
  ["budget", (r) => `${r.budget / 1000}k`],
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

/** `n` to `digits` places, never `-0.00`: a value that rounds to zero prints unsigned. */
export function fixedNoNegativeZero(n: number, digits: number): string {
  const text = n.toFixed(digits);
  return /^-0\.?0*$/.test(text) ? text.slice(1) : text;
}

const COST_COLUMN: [string, (r: SweepRow) => string] = ["cost $", (r) => (r.figures.costUsd === null ? "unpriced" : fixedNoNegativeZero(r.figures.costUsd, 2))];

export function renderTable(result: SweepResult, cache: CacheRules, labels: { model?: string | undefined; pricingFile?: string | undefined; counter?: string | undefined } = {}): string {
  const { model, pricingFile } = labels;
  const rows = [...result.rows, ...(result.rows.length > result.total.length ? result.total : [])];
  const columns = model === undefined ? COLUMNS : [...COLUMNS, COST_COLUMN];
  const cells = rows.map((r) => columns.map(([, cell]) => cell(r)));
  const widths = columns.map(([head], k) => Math.max(head.length, ...cells.map((c) => c[k]!.length)));
  const line = (values: string[]) => values.map((v, k) => (k < 2 ? v.padEnd(widths[k]!) : v.padStart(widths[k]!))).join("  ");
  return [
    `cache rules: ${cache}; token counter: ${labels.counter ?? "estimate, 4 characters a token"}; billed-equivalent = input + 1.25 × 5-minute writes + 2 × 1-hour writes + 0.1 × reads (worker included)`,
    ...(model === undefined ? [] : [`priced as ${model} (${PRICE_TABLE.source} ${PRICE_TABLE.version}${pricingFile === undefined ? "" : `, overridden by ${pricingFile}`}), each request on its own`]),
    line(columns.map(([head]) => head)),
    ...cells.map(line),
  ].join("\n");
}

function toJson(result: SweepResult, grouped: boolean) {
  const row = (r: SweepRow) => {
    const { stats: _stats, ...figures } = r.figures;
    return { input: r.input, strategy: r.strategy, budget: r.budget, ...figures };
  };
  return { total: result.total.map(row), [grouped ? "suites" : "files"]: result.rows.map(row) };
}

