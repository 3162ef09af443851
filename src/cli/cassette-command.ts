/**
 * `rhema cassette show FILE [--json]` and `rhema cassette prune DIR --runs RUNS…` (below).
 *
 * show: a cassette (issue 25) for people — who recorded it and
 * when, then each exchange: the request's hash and size, what was made stable in it, its last
 * message, the answer (text, tool calls, stop reason), the billed usage and the time it took.
 * With `--runs`, what each replay of it in those run directories did: the exchanges it used and
 * its miss (where the request first differed, and whether the trial then went live).
 * `--json` prints the cassette as read (its header and exchanges, and the replays), one object.
 * A file a killed recording cut is read up to its last whole exchange, and says so. Nothing is
 * written.
 */
import { stat } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import type { Argv } from "yargs";
import { RhemaError } from "../core/errors.js";
import type { CassetteExchange } from "../core/cassette-exchange.js";
import { keptExchanges, readCassette, writeCassette, type Cassette } from "../store/cassette-file.js";
import { readCassetteUse, type CassetteUse } from "../runner/run-dir/cassette-use.js";
import { cassetteFilesUnder } from "../runner/execute/trial-cassette.js";
import { lockCassetteFolder } from "../runner/execute/cassette-lock.js";
import { TASKS_DIR, TASK_FILES } from "../runner/run-dir/task-folder.js";
import { EXIT_OK, type ExitCode } from "./exit-codes.js";
import { print, type CliIo } from "./io.js";
import { withExamples } from "./help-format.js";

export interface CassetteShowArgs {
  file: string;
  json?: boolean | undefined;
  runs?: string[] | undefined;
}

export function cassetteShowOptions<T>(y: Argv<T>) {
  return withExamples(y, [
    ["$0 cassette show cassettes/arithmetic/fix-add/default/1.jsonl", "what a trial's recording asked and was answered"],
    ["$0 cassette show cassettes/arithmetic/fix-add/default/1.jsonl --json", "the same, as JSON"],
    ["$0 cassette show cassettes/arithmetic/fix-add/default/1.jsonl --runs .rhema/runs/replay", "and what the replay in that run did with it: used, missed"],
  ])
    .positional("file", { type: "string", demandOption: true, describe: "a cassette (DIR/<suite>/<id>/<variant|default>/<n>.jsonl)" })
    .option("runs", { type: "string", array: true, describe: "run directories of replays: show the exchanges each used and its miss" })
    .option("json", { type: "boolean", default: false, describe: "print the cassette as read, as one JSON object" });
}

/** What one run's replay of the cassette did (its trial's cassette-used.json); `use` null: the run did not replay it. */
interface ReplayOfCassette {
  run: string;
  use: CassetteUse | null;
}

export async function cassetteShowCommand(args: CassetteShowArgs, io: CliIo): Promise<ExitCode> {
  const path = resolve(io.cwd, args.file);
  const runs = await runDirectories(args.runs ?? [], io.cwd);
  const cassette = await readCassette(path);
  if (cassette === null) throw new RhemaError("usage", `${args.file}: no such cassette`);
  // A cassette's last four segments are its trial's folder in a run directory.
  const trialFolder = path.split(sep).slice(-4).join(sep).slice(0, -".jsonl".length);
  const replays = await Promise.all(runs.map(async ({ given, dir }): Promise<ReplayOfCassette> =>
    ({ run: given, use: await useIn(dir, trialFolder) })));
  print(io.stdout, args.json === true
    ? JSON.stringify({ ...cassette, ...(args.runs ? { replays } : {}) }, null, 2)
    : [...describeCassette(cassette), ...replays.flatMap(describeReplay)].join("\n"));
  return EXIT_OK;
}

/** A replay's lines for people (pure). */
export function describeReplay({ run, use }: ReplayOfCassette): string[] {
  if (use === null) return [`replay in ${run}: did not replay this cassette`];
  const used = use.used.length === 0 ? "no exchange" : `exchange${use.used.length === 1 ? "" : "s"} ${use.used.map((n) => `#${n}`).join(", ")}`;
  const lines = [`replay in ${run}: used ${used}${use.miss ? "" : "; no miss"}`];
  if (use.miss) {
    const who = use.miss.who === "worker" ? " of the compaction worker" : "";
    lines.push(`  missed request ${use.miss.request}${who} (${use.miss.hash.slice(0, 19)}…)${use.miss.wentLive ? ", which and the rest of the trial went live" : ", which failed the trial"}:`);
    lines.push(...use.miss.detail.split("\n").map((line) => `    ${line.trim()}`));
  }
  return lines;
}

/** The cassette as lines for people (pure). */
export function describeCassette(cassette: Cassette): string[] {
  const { header, exchanges } = cassette;
  const lines = [
    `${cassette.path}: ${header.provider}${header.model === null ? "" : ` ${header.model}`}, recorded ${header.recordedAt}` +
      `${header.trialStartedAt ? ` (trial started ${header.trialStartedAt})` : ""}, ${exchanges.length} exchange${exchanges.length === 1 ? "" : "s"}`,
  ];
  if (cassette.tornTail) lines.push("  the last line was cut short (a recording killed mid-write): read up to the exchange before it");
  for (const exchange of exchanges) lines.push(...describeExchange(exchange));
  return lines;
}

function describeExchange(e: CassetteExchange): string[] {
  const who = e.who === "worker" ? " (compaction worker)" : "";
  const usage = e.usage === null ? "no usage reported"
    : `in ${e.usage.inputTokens}, cache read ${e.usage.cacheReadTokens}, cache write ${e.usage.cacheWriteTokens}, out ${e.usage.outputTokens}`;
  return [
    `#${e.exchange}${who} ${e.hash.slice(0, 19)}…  ${e.request.messages.length} messages, ${e.request.tools.length} tools; ${usage}; ${e.timing.totalMs} ms`,
    ...(e.normalised.length > 0 ? [`  made stable: ${e.normalised.join(", ")}`] : []),
    `  asked:    ${clip(lastMessage(e.request.messages))}`,
    ...answer(e).map((line) => `  answered: ${clip(line)}`),
  ];
}

/** The request's last message as one line: its role and the text (or tool result) it ends with. */
function lastMessage(messages: readonly unknown[]): string {
  const last = messages.at(-1) as { role?: string; content?: Array<Record<string, unknown>> } | undefined;
  if (last === undefined) return "(no messages)";
  const block = last.content?.at(-1);
  const text = block === undefined ? "" : typeof block.text === "string" ? block.text : typeof block.content === "string" ? `[${String(block.type)}] ${block.content}` : JSON.stringify(block);
  return `${last.role ?? "?"}: ${text}`;
}

function answer(e: CassetteExchange): string[] {
  const out: string[] = [];
  const text = e.events.flatMap((ev) => (ev.type === "text" ? [ev.delta] : [])).join("");
  if (text !== "") out.push(`text ${JSON.stringify(text)}`);
  for (const ev of e.events) if (ev.type === "tool_call") out.push(`${ev.name} ${JSON.stringify(ev.input)}`);
  const stop = e.events.find((ev) => ev.type === "stop");
  out.push(`stop ${stop?.type === "stop" ? stop.reason : "(none)"}`);
  return out;
}

function clip(text: string, max = 160): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export interface CassettePruneArgs {
  dir: string;
  runs: string[];
  dryRun?: boolean | undefined;
}

export function cassettePruneOptions<T>(y: Argv<T>) {
  return withExamples(y, [
    ["$0 cassette prune cassettes --runs .rhema/runs/replay", "drop the exchanges the replay did not use"],
    ["$0 cassette prune cassettes --runs shard-1 shard-2 --dry-run", "say what would go, from two shards' replays"],
  ])
    .positional("dir", { type: "string", demandOption: true, describe: "the folder of cassettes (run --cassette)" })
    .option("runs", { type: "string", array: true, demandOption: true, describe: "run directories of replays of DIR: what their trials used is kept" })
    .option("dry-run", { type: "boolean", default: false, describe: "say what would be dropped, and write nothing" });
}

/**
 * `rhema cassette prune DIR --runs RUNS…`: each cassette a run replayed keeps the exchanges its
 * trials used (their cassette-used.json, over every run given) and drops the rest, numbered again;
 * a cassette no run replayed is kept whole and named. Each file is replaced atomically.
 */
export async function cassettePruneCommand(args: CassettePruneArgs, io: CliIo): Promise<ExitCode> {
  const dir = resolve(io.cwd, args.dir);
  const runs = await runDirectories(args.runs, io.cwd);
  if (!(await isFolder(dir))) throw new RhemaError("usage", `${args.dir}: not a folder of cassettes`);
  // A recording appending to a cassette this replaces would lose its exchanges: one writer at a time.
  const lock = args.dryRun === true ? null : await lockCassetteFolder(dir, process.pid);
  try {
    await pruneCassettes(dir, runs, args.dryRun === true, io);
  } finally {
    await lock?.release();
  }
  return EXIT_OK;
}

/** Each cassette under `dir` that a run of `runs` replayed, cut to the exchanges some run used. */
async function pruneCassettes(dir: string, runs: ReadonlyArray<{ dir: string }>, dryRun: boolean, io: CliIo): Promise<void> {
  let dropped = 0;
  let pruned = 0;
  const unreplayed: string[] = [];
  for (const file of await cassetteFilesUnder(dir)) {
    const rel = relative(dir, file);
    const trialFolder = rel.slice(0, -".jsonl".length);
    const uses = await Promise.all(runs.map(({ dir: run }) => useIn(run, trialFolder)));
    if (uses.every((u) => u === null)) {
      unreplayed.push(rel);
      continue;
    }
    const cassette = (await readCassette(file))!;
    const kept = keptExchanges(cassette.exchanges, new Set(uses.flatMap((u) => u?.used ?? [])));
    if (kept.length === cassette.exchanges.length && !cassette.tornTail) continue;
    pruned += 1;
    dropped += cassette.exchanges.length - kept.length;
    print(io.stdout, `${rel}: ${dryRun ? "would keep" : "kept"} ${kept.length} of ${cassette.exchanges.length} exchanges`);
    if (!dryRun) await writeCassette(file, cassette.header, kept);
  }
  if (unreplayed.length > 0) print(io.stdout, `not replayed by any run given, kept whole: ${unreplayed.join(", ")}`);
  print(io.stdout, `${dryRun ? "would prune" : "pruned"} ${pruned} cassette${pruned === 1 ? "" : "s"}: ${dropped} exchange${dropped === 1 ? "" : "s"} ${dryRun ? "to drop" : "dropped"}`);
}

/** `--runs`, each checked to be a run directory (a `usage` error naming it otherwise). */
async function runDirectories(given: readonly string[], cwd: string): Promise<Array<{ given: string; dir: string }>> {
  const runs = given.map((g) => ({ given: g, dir: resolve(cwd, g) }));
  for (const run of runs) {
    if (!(await isFolder(join(run.dir, TASKS_DIR)))) throw new RhemaError("usage", `--runs ${run.given}: not a run directory (no ${TASKS_DIR}/ folder)`);
  }
  return runs;
}

/** The cassette-used.json of the trial at `trialFolder` in run `run`; null: the run did not replay it. */
async function useIn(run: string, trialFolder: string): Promise<CassetteUse | null> {
  const path = join(run, TASKS_DIR, trialFolder, TASK_FILES.cassetteUsed);
  return (await isFile(path)) ? readCassetteUse(path) : null;
}

async function isFolder(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isFile() ?? false;
}
