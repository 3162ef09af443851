/**
 * `rhema report trend DIRS… [--last N] [--flaky-in M] [--flips F] [--out FILE] [--json FILE]
 * [--propose-quarantine FILE]`: the trend of each task over a run history (runner/reports/trend-*),
 * as Markdown on stdout (or `--out`), as JSON, and as a proposed quarantine file. Files in, files
 * out: nothing is run. Each output is written as a report copy is: atomically (0644) in a folder
 * made when missing, or into a link, FIFO or device.
 */
import { mkdir } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { RhemaError } from "../core/errors.js";
import { counted } from "../core/counted.js";
import { fsyncDir, replaceFileAtomic } from "../store/private-files.js";
import { guardOutput } from "../runner/run-dir/output-guard.js";
import { reportDestination, writeInto } from "../runner/reports/report-destination.js";
import { readRunHistory } from "../runner/reports/trend-history.js";
import { DEFAULT_TREND_RULE, trendOf, type TrendRule } from "../runner/reports/trend-figures.js";
import { describeRule, proposedQuarantine, renderTrendJson, renderTrendMarkdown } from "../runner/reports/trend-render.js";
import { renderQuarantineFile } from "../runner/tasks/quarantine-file.js";
import { EXIT_OK, type ExitCode } from "./exit-codes.js";
import { print, type CliIo } from "./io.js";
import { parseCountFlag } from "./run-command.js";

export interface TrendArgs {
  dirs: string[];
  last?: string | number | undefined;
  flakyIn?: string | number | undefined;
  flips?: string | number | undefined;
  out?: string | undefined;
  json?: string | undefined;
  proposeQuarantine?: string | undefined;
}

export async function reportTrendCommand(args: TrendArgs, io: CliIo): Promise<ExitCode> {
  const rule: TrendRule = {
    last: args.last === undefined ? DEFAULT_TREND_RULE.last : parseCountFlag("--last", args.last),
    flakyIn: args.flakyIn === undefined ? DEFAULT_TREND_RULE.flakyIn : parseCountFlag("--flaky-in", args.flakyIn),
    flips: args.flips === undefined ? DEFAULT_TREND_RULE.flips : parseCountFlag("--flips", args.flips),
  };
  const outputs = [args.out, args.json, args.proposeQuarantine].flatMap((p) => (p === undefined ? [] : [resolve(io.cwd, p)]));
  if (new Set(outputs).size !== outputs.length) throw new RhemaError("usage", "Expected --out, --json and --propose-quarantine to name different files");
  const trend = trendOf(await readRunHistory(args.dirs.map((d) => resolve(io.cwd, d))), rule);
  const markdown = renderTrendMarkdown(trend);
  if (args.out === undefined) print(io.stdout, markdown.trimEnd());
  else await writeOutput(resolve(io.cwd, args.out), markdown);
  if (args.json !== undefined) await writeOutput(resolve(io.cwd, args.json), renderTrendJson(trend));
  if (args.proposeQuarantine !== undefined) {
    const entries = proposedQuarantine(trend);
    const header = [
      `Proposed by rhema report trend over ${counted(trend.runs.length, "run")} (${trend.runs[0]?.runId ?? "none"} … ${trend.runs.at(-1)?.runId ?? "none"}).`,
      `Rule: ${describeRule(trend)}.`,
      "Use it with rhema run --quarantine FILE (or the Action's quarantine input).",
    ];
    await writeOutput(resolve(io.cwd, args.proposeQuarantine), renderQuarantineFile(entries, header));
    print(io.stderr, `rhema: proposed quarantine: ${counted(entries.length, "task")} written to ${resolve(io.cwd, args.proposeQuarantine)}`);
  }
  return EXIT_OK;
}

/** Writes `text` to `path` as a report copy is written (see the header); a failure is an OutputError naming the path (exit 3). */
async function writeOutput(path: string, text: string): Promise<void> {
  await guardOutput(path, "write", async () => {
    await mkdir(dirname(path), { recursive: true });
    if ((await reportDestination(path)) === "into") return writeInto(path, text, { append: false });
    await replaceFileAtomic(path, text, { mode: 0o644, fsync: true });
    await fsyncDir(dirname(path));
  });
}
