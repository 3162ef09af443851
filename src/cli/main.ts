#!/usr/bin/env node
/**
 * The `rhema` command line: parses flags with yargs and hands each command the process's
 * cwd, environment, streams and an interrupt signal. The only place that exits.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import yargs, { type Argv } from "yargs";
import { hideBin } from "yargs/helpers";
import { EXIT_CODES_HELP, EXIT_INTERRUPTED, EXIT_INVALID_INPUT, describeFailure, type ExitCode } from "./exit-codes.js";
import { print, type CliIo } from "./io.js";
import { DEFAULT_RUN_DIR, runCommand, type RunArgs } from "./run-command.js";
import { reportMergeCommand, validateCommand } from "./other-commands.js";
import { policyCheck } from "./policy-command.js";
import { benchReplayCommand, type BenchReplayArgs } from "./bench-command.js";

function packageVersion(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ["../../package.json", "../../../package.json"]) {
    try {
      return (JSON.parse(readFileSync(join(here, up), "utf8")) as { version: string }).version;
    } catch {
      // try the next layout (compiled or from source)
    }
  }
  return "unknown";
}

function runOptions(y: Argv) {
  return y
    .positional("paths", { type: "string", array: true, demandOption: true, describe: "task files, folders or globs" })
    .option("out", { type: "string", default: DEFAULT_RUN_DIR, describe: "run directory; running again on it resumes" })
    .option("concurrency", { type: "number", default: 4, describe: "tasks at once" })
    .option("policy", { type: "string", describe: "policy file (or preset:read-only|workspace-write|ci) for tasks that name none" })
    .option("provider", { type: "string", choices: ["anthropic", "openai"], describe: "model provider for tasks that name none" })
    .option("model", { type: "string", describe: "model name for tasks that name none" })
    .option("filter", { type: "string", array: true, default: [], describe: "glob on suite/id (repeatable)" })
    .option("tag", { type: "string", array: true, default: [], describe: "run tasks with this tag (repeatable)" })
    .option("shard", { type: "string", describe: "i/n: this job's share of the tasks" })
    .option("junit", { type: "string", describe: "also write the JUnit report here" })
    .option("stats", { type: "string", describe: "also write stats.json here" })
    .option("summary", { type: "string", describe: "also write summary.md here (e.g. $GITHUB_STEP_SUMMARY)" })
    .option("restart-changed", { type: "boolean", default: false, describe: "start afresh tasks whose file changed since their checkpoint" })
    .option("retry-errored", { type: "boolean", default: false, describe: "continue errored tasks (provider outage, timeout) from their checkpoints" })
    .option("report-skipped", { type: "boolean", default: false, describe: "list filtered-out tasks as skipped in JUnit" })
    .option("json", { type: "boolean", default: false, describe: "write the event stream as JSON lines to stdout" })
    .option("max-steps", { type: "number", describe: "step cap for tasks that set none (default 40)" })
    .option("timeout", { type: "string", describe: "timeout for tasks that set none (90s, 10m, 1h)" })
    .option("allow-env", { type: "string", array: true, default: [], describe: "secret-looking variable the shell may see (repeatable)" })
    .epilogue(EXIT_CODES_HELP);
}

function benchReplayOptions(y: Argv) {
  return y
    .positional("inputs", { type: "string", array: true, demandOption: true, describe: "corpus .jsonl files or folders, or rhema run directories" })
    .option("strategy", { type: "string", array: true, default: [], describe: "sections | summarize-all | keep-recent | none (repeatable; default all)" })
    .option("budget", { type: "number", array: true, default: [], describe: "budget in tokens (repeatable; default 32000 64000 128000)" })
    .option("block", { type: "number", describe: "section size in tokens (default: a tenth of the budget, at most 8000)" })
    .option("cache", { type: "string", default: "anthropic", choices: ["anthropic", "openai"], describe: "the provider whose cache rules apply" })
    .option("chain", { type: "boolean", default: false, describe: "join the inputs, in order, into one long session" })
    .option("gap", { type: "number", default: 15, describe: "seconds between chained inputs" })
    .option("json", { type: "boolean", default: false, describe: "one JSON object instead of the table" })
    .option("chart", { type: "string", describe: "write an SVG chart of cost against retained context and hit rate against budget" })
    .example("rhema bench replay ../shared/corpus/terminal-bench --chain --budget 32000 --budget 64000", "compare the strategies on the corpus as one long session")
    .example("rhema bench replay .rhema/runs/latest --strategy sections --chart replay.svg", "what last night's run would have cost under other budgets");
}

export async function main(argv: string[], io: CliIo): Promise<ExitCode> {
  let code: ExitCode = 0;
  const run = (promise: Promise<ExitCode>) => promise.then((c) => void (code = c));
  const parser = yargs(argv)
    .scriptName("rhema")
    .version(packageVersion())
    .strict()
    .exitProcess(false)
    .wrap(Math.min(110, (io.stderr as { columns?: number }).columns ?? 100))
    .fail((msg, err) => {
      throw err ?? new UsageError(msg);
    })
    .command("run <paths..>", "run task suites and write reports", runOptions, (a) => run(runCommand(a as unknown as RunArgs, io)))
    .command("validate <paths..>", "check task files and their policies, running nothing",
      (y) => y.positional("paths", { type: "string", array: true, demandOption: true })
        .option("policy", { type: "string", describe: "default policy to check too" }),
      (a) => run(validateCommand(a as never, io)))
    .command("policy", "policy files", (y) =>
      y.command("check", "decide one tool call under a policy", (c) => c
        .option("policy", { type: "string", demandOption: true })
        .option("tool", { type: "string", demandOption: true })
        .option("input", { type: "string", demandOption: true, describe: "the call's input as JSON" })
        .option("workspace", { type: "string" })
        .option("json", { type: "boolean", default: false }),
      (a) => run(policyCheckCommand(a as never, io)))
        .demandCommand(1, "name a policy command: check"))
    .command("report", "reports", (y) =>
      y.command("merge <dirs..>", "merge the reports of several run directories (CI shards)", (c) => c
        .positional("dirs", { type: "string", array: true, demandOption: true })
        .option("out", { type: "string", demandOption: true }),
      (a) => run(reportMergeCommand(a as never, io)))
        .demandCommand(1, "name a report command: merge"))
    .command("bench", "benchmarks", (y) =>
      y.command("replay <inputs..>", "replay recorded sessions under compaction strategies and budgets through the prompt-cache simulator", benchReplayOptions,
        (a) => run(benchReplayCommand(a as unknown as BenchReplayArgs, io)))
        .demandCommand(1, "name a bench command: replay"))
    .demandCommand(1, "name a command: run, validate, policy check, report merge, bench replay")
    .help();
  try {
    await parser.parseAsync();
  } catch (err) {
    if (err instanceof UsageError) {
      print(io.stderr, `rhema: ${err.message}\nSee \`rhema --help\`.`);
      return EXIT_INVALID_INPUT;
    }
    if (io.interrupt.aborted) return EXIT_INTERRUPTED;
    const { code: failCode, message } = describeFailure(err);
    print(io.stderr, message);
    if (io.env.RHEMA_DEBUG && err instanceof Error && err.stack) print(io.stderr, err.stack);
    return failCode;
  }
  return code;
}

class UsageError extends Error {}

async function policyCheckCommand(a: { policy: string; tool: string; input: string; workspace?: string; json: boolean }, io: CliIo): Promise<ExitCode> {
  const result = await policyCheck({ policy: a.policy, tool: a.tool, input: a.input, workspace: a.workspace ?? io.cwd, json: a.json, cwd: io.cwd });
  if (result.stdout) print(io.stdout, result.stdout);
  if (result.stderr) print(io.stderr, result.stderr);
  return result.exitCode as ExitCode;
}

const isEntry = process.argv[1] && fileURLToPath(import.meta.url) === (await import("node:fs")).realpathSync(process.argv[1]);
if (isEntry) {
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (name: string) => {
    signals += 1;
    if (signals > 1) process.exit(EXIT_INTERRUPTED); // a second Ctrl-C: stop now; checkpoints are already on disk
    process.stderr.write(`\nrhema: ${name}: checkpointing and writing reports (again to stop at once)\n`);
    controller.abort();
  };
  process.on("SIGINT", () => onSignal("SIGINT"));
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  const code = await main(hideBin(process.argv), {
    cwd: process.cwd(), env: process.env, stdout: process.stdout, stderr: process.stderr, pid: process.pid, interrupt: controller.signal,
  });
  process.exitCode = code;
}
