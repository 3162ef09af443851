#!/usr/bin/env node
/**
 * The `rhema` command line: parses flags with yargs and hands each command the process's
 * cwd, environment, streams and an interrupt signal. The only place that exits. Help is rendered
 * here and printed through the streams (help-format.ts keeps examples whole); a command that
 * needs a subcommand and got none prints its own help to stderr, exit 2.
 */
import { HOST_ID_VARIABLE, adoptHostIdentity } from "../process/user-namespace.js";
import { readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import yargs, { type Argv } from "yargs";
import { hideBin } from "yargs/helpers";
import { EXIT_CODES_HELP, EXIT_INTERRUPTED, EXIT_INVALID_INPUT, EXIT_TASK_FAILED, describeFailure, type ExitCode } from "./exit-codes.js";
import { print, quietOnClosedPipe, redactingStream, type CliIo } from "./io.js";
import { SecretRedactor } from "../runner/run-dir/secret-redactor.js";
import { checkPathFlags, type PathCommand } from "./path-flags.js";
import { DEFAULT_RUN_DIR, runCommand } from "./run-command.js";
import { JUNIT_CASES } from "../runner/reports/report-meta.js";
import { SANDBOX_MODES } from "../process/sandbox-mode.js";
import { WORKSPACE_LAYER_CHOICES } from "../runner/execute/workspace-layers.js";
import { installShutdownSignals } from "../runner/execute/shutdown-signals.js";
import { stallNetFor } from "../runner/execute/stall-net.js";
import { expandExamples, helpWidth, oneNamePerUnknownArgument, withExamples } from "./help-format.js";
import { routeSdkWarnings } from "../providers/sdk-warnings.js";
import { NAMED_PROVIDERS } from "../providers/provider-registry.js";

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

/** `--sandbox`, on run and validate: the least sandbox asked for; a policy or task file may ask for more. */
const SANDBOX_OPTION = {
  type: "string", choices: SANDBOX_MODES,
  describe: "OS sandbox (bubblewrap) for shell commands, setup and checks: auto (default: bwrap when it works, else unsandboxed with a warning), " +
    "bwrap (required: exit 3 without it), off. The strictest of this, the policy's and the task's `sandbox:` wins",
} as const;

/** The run flags the planner reads: declared once, on `run` and on `validate` (which plans the same way). */
const PROVIDER_OPTION = { type: "string", choices: NAMED_PROVIDERS, describe: "model provider for tasks that name none" } as const;
const MODEL_OPTION = { type: "string", describe: "model name for tasks that name none" } as const;
const BASE_URL_OPTION = { type: "string", describe: "endpoint for --provider/--model (a compatible server or proxy); else the provider's *_BASE_URL (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL, ANTHROPIC_BEDROCK_BASE_URL, ANTHROPIC_VERTEX_BASE_URL)" } as const;
const MATRIX_OPTION = { type: "string", describe: "matrix file (YAML, top-level matrix:): every task runs as each of its cells (variants), trials = task × variant × repeat" } as const;
const CALIBRATION_OPTION = { type: "string", describe: "calibration file (JSON, rhema bench calibrate): every task counts its tokens with its factors" } as const;
const PRICING_OPTION = { type: "string", describe: "pricing file (YAML, schema/pricing.schema.json): adds models to the price table or overrides their prices" } as const;
const MAX_COST_OPTION = { type: "string", describe: "the run's budget in dollars, across all tasks: once spent, tasks stop (resumably, status stopped) and none starts" } as const;
const TIMEOUT_OPTION = { type: "string", describe: "timeout for tasks that set none (90s, 10m, 1h, or a number of seconds as in limits.timeout; none: no limit)" } as const;
const QUARANTINE_OPTION = { type: "string", describe: "quarantine file (YAML: version: 1, quarantine: [suite/id, …]): those tasks' failures are reported but do not fail the run" } as const;
const STREAM_IDLE_OPTION = { type: "string", describe: "end a model's stream that sends no content for this long, as a retryable provider error (90s, 5m or a number of seconds; default 5m; none: no limit)" } as const;

/** The options of `run`, for its yargs builder: the one place they are declared. */
function runOptions<T>(y: Argv<T>) {
  return withExamples(y, [
    ["$0 run tasks/", "run every task under tasks/, resuming .rhema/runs/latest"],
    ["$0 run tasks/ --filter 'arithmetic/*' --junit junit.xml --json", "one suite, a JUnit copy, events as JSON lines"],
  ])
    .positional("paths", { type: "string", array: true, demandOption: true, default: undefined, describe: "task files, folders or globs" })
    .option("out", { type: "string", default: DEFAULT_RUN_DIR, describe: "run directory; running again on it resumes" })
    .option("concurrency", { type: "string", default: "4", describe: "tasks at once (a whole number from 1 up)" })
    .option("policy", { type: "string", describe: "policy file (or preset:read-only|workspace-write|ci) for tasks that name none" })
    .option("provider", PROVIDER_OPTION)
    .option("model", MODEL_OPTION)
    .option("filter", { type: "string", array: true, default: [], describe: "glob on suite/id (repeatable)" })
    .option("tag", { type: "string", array: true, default: [], describe: "run tasks with this tag (repeatable)" })
    .option("base-url", BASE_URL_OPTION)
    .option("shard", { type: "string", describe: "i/n: this job's share of the tasks (with --matrix: of the (task, variant) pairs)" })
    .option("matrix", MATRIX_OPTION)
    .option("junit", { type: "string", describe: "also write the JUnit report here" })
    .option("stats", { type: "string", describe: "also write stats.json here" })
    .option("summary", { type: "string", describe: "append the final summary to this file once per run (e.g. $GITHUB_STEP_SUMMARY)" })
    .option("restart-changed", { type: "boolean", default: false, describe: "start afresh tasks whose file changed since their checkpoint; continue trials whose MCP servers' tools changed with the new tools" })
    .option("add", { type: "boolean", default: false, describe: "add selected tasks the run directory's run lacks to it" })
    .option("restart", { type: "boolean", default: false, describe: "start the run directory's run over: its tasks and manifest are wiped first" })
    .option("retry-errored", { type: "boolean", default: false, describe: "continue errored tasks (provider outage, timeout, an MCP server that did not start) from their checkpoints; run a failed setup again in a fresh workspace; start afresh a task whose structured answer stayed invalid" })
    .option("report-skipped", { type: "boolean", default: false, describe: "list filtered-out tasks as skipped in JUnit" })
    .option("json", { type: "boolean", default: false, describe: "write the event stream as JSON lines to stdout" })
    .option("max-steps", { type: "string", describe: "step cap for tasks that set none (a whole number from 1 up; default 40); a larger one continues tasks that used all their steps" })
    .option("timeout", TIMEOUT_OPTION)
    .option("stream-idle", STREAM_IDLE_OPTION)
    .option("max-cost", MAX_COST_OPTION)
    .option("max-tokens", { type: "string", describe: "the run's budget in tokens (input + cache + output), across all tasks, likewise" })
    .option("stopped-ok", { type: "boolean", default: false, describe: "a task stopped on a budget does not fail the run (exit 0 if the rest passed)" })
    .option("allow-env", { type: "string", array: true, default: [], describe: "secret-looking variable the shell may see (repeatable)" })
    .option("sandbox", SANDBOX_OPTION)
    .option("workspace-layers", { type: "string", choices: WORKSPACE_LAYER_CHOICES, describe: "how fixture workspaces are made: a layer of each trial's own over one shared read-only base (overlay as root, fuse-overlayfs), or copies; auto (default) mounts where it can" })
    .option("pricing", PRICING_OPTION)
    .option("calibration", CALIBRATION_OPTION)
    .option("repeats", { type: "string", describe: "trials of each task that sets no repeats: (a whole number from 1 up; default 1); each has its own workspace, checkpoint and result" })
    .option("min-pass-rate", { type: "string", describe: "share of a task's counted trials that must pass, for tasks that set no pass.rate (above 0 to 1; default: every trial)" })
    .option("gate", { type: "string", choices: ["rate", "lower"], describe: "what a pass rate is judged on: the rate (default), or the lower bound of its Wilson 95% interval" })
    .option("stop-early", { type: "boolean", default: false, describe: "stop a task's trials once its gate's outcome cannot change; the unstarted ones are skipped (gate decided)" })
    .option("pass-at", { type: "string", describe: "the k's of pass@k and pass^k the reports show, e.g. 1,3" })
    .option("junit-cases", { type: "string", choices: [...JUNIT_CASES], describe: "a JUnit testcase per task (default: its trials as properties and flaky/rerun entries), per trial, or per check (classname suite.id, line = the check's line)" })
    .option("quarantine", QUARANTINE_OPTION)
    .option("cassette", { type: "string", describe: "folder of cassettes: record each trial's model exchanges there, or answer from them (DIR/<suite>/<id>/<variant|default>/<n>.jsonl)" })
    .option("cassette-mode", { type: "string", choices: ["record", "strict", "hybrid", "record-missing"], describe: "record; strict (replay, a request with no recorded answer fails its trial; no key needed); hybrid (a miss and the rest of its trial go live); record-missing (as hybrid, and recorded). Default: strict when --cassette holds cassettes, else record" })
    .option("cassette-usage", { type: "string", choices: ["recorded", "simulate"], describe: "in a replay, each answer's usage: recorded (default, as billed) or simulate (the prompt-cache simulator's for the request as sent now; cost marked simulated)" })
    .epilogue(EXIT_CODES_HELP);
}


/** The options of `validate`. */
function validateOptions<T>(y: Argv<T>) {
  return withExamples(y, [
    ["$0 validate tasks/", "check every task file and the policies they use"],
    ["$0 validate tasks/policies/ci.yaml", "check one policy file"],
  ])
    .positional("paths", { type: "string", array: true, demandOption: true, default: undefined, describe: "task files, folders or globs; a policy file is checked as a policy" })
    .option("policy", { type: "string", describe: "default policy to check too, for tasks that name none" })
    .option("provider", PROVIDER_OPTION)
    .option("model", MODEL_OPTION)
    .option("base-url", BASE_URL_OPTION)
    .option("sandbox", SANDBOX_OPTION)
    .option("pricing", PRICING_OPTION)
    .option("calibration", CALIBRATION_OPTION)
    .option("matrix", MATRIX_OPTION)
    .option("max-cost", MAX_COST_OPTION)
    .option("timeout", TIMEOUT_OPTION)
    .option("stream-idle", STREAM_IDLE_OPTION)
    .option("allow-env", { type: "string", array: true, default: [], describe: "secret-looking variable the shell may see (repeatable), as on run" })
    .option("repeats", { type: "string", describe: "trials for tasks that set no repeats: (for the gate warning)" })
    .option("min-pass-rate", { type: "string", describe: "pass rate for tasks that set no pass.rate (for the gate warning)" })
    .option("gate", { type: "string", choices: ["rate", "lower"], describe: "judge a pass rate on the rate (default) or on its 95 % interval's lower bound (for the gate warning)" })
    .option("quarantine", { type: "string", describe: "quarantine file to check too: its format, and that it names tasks of the suite (an unknown one is a warning)" })
    .epilogue(EXIT_CODES_HELP);
}

/** The options of `report merge`. */
function reportMergeOptions<T>(y: Argv<T>) {
  return withExamples(y, [["$0 report merge shard-1 shard-2 --out merged", "one junit.xml, stats.json and summary.md for all shards"]])
    .positional("dirs", { type: "string", array: true, demandOption: true, default: undefined, describe: "run directories, one per shard" })
    .option("out", { type: "string", demandOption: true, describe: "run directory to write the merged reports into" })
    .option("allow-partial", { type: "boolean", default: false, describe: "merge although shards are missing; the merged reports name them" })
    .option("pass-at", { type: "string", describe: "the k's of pass@k and pass^k the merged reports show, e.g. 1,3" })
    .option("junit-cases", { type: "string", choices: [...JUNIT_CASES], default: "task", describe: "a JUnit testcase per task (its trials as properties and flaky/rerun entries), per trial, or per check (classname suite.id, line = the check's line)" });
}

/** The options of `report html`. */
function reportHtmlOptions<T>(y: Argv<T>) {
  return withExamples(y, [["$0 report html .rhema/runs/latest", "write the run's report.html again (an old or merged run's too)"]])
    .positional("dir", { type: "string", demandOption: true, default: undefined, describe: "the run directory (a run's or a merge's --out)" })
    .option("out", { type: "string", describe: "write the page here instead of DIR/report.html" });
}

/** The options of `report trend`. */
function reportTrendOptions<T>(y: Argv<T>) {
  return withExamples(y, [
    ["$0 report trend runs/* --propose-quarantine quarantine.yaml", "per task: pass rate, flaky runs, cost; the tasks to quarantine"],
  ])
    .positional("dirs", { type: "string", array: true, demandOption: true, default: undefined, describe: "run directories (in any order: they are read oldest first by when each run started)" })
    .option("last", { type: "string", default: "10", describe: "how many of the newest runs the figures cover (a whole number from 1 up)" })
    .option("flaky-in", { type: "string", default: "2", describe: "propose a task flaky (its trials both passed and failed) in at least this many of those runs" })
    .option("flips", { type: "string", default: "3", describe: "propose a task whose verdict flipped (passed ↔ not) at least this many times in those runs" })
    .option("out", { type: "string", describe: "write the Markdown here instead of stdout" })
    .option("json", { type: "string", describe: "also write the trend as JSON here" })
    .option("propose-quarantine", { type: "string", describe: "write the proposed quarantine file here (for run --quarantine)" });
}

/** The commands, as `rhema bogus` lists them: each top-level name with its subcommands. */
const COMMANDS: Readonly<Record<string, readonly string[]>> = {
  run: [], validate: [], policy: ["check"], report: ["merge", "compare", "trend", "html"], bench: ["replay", "calibrate"], cassette: ["show", "prune"],
};

/** Every command's full name (`policy check`) and its yargs command string: docs/cli.md is checked against these. */
export const COMMAND_LINES = {
  run: "run <paths..>",
  validate: "validate <paths..>",
  "policy check": "check",
  "report merge": "merge <dirs..>",
  "report compare": "compare <dirs..>",
  "report trend": "trend <dirs..>",
  "report html": "html <dir>",
  "bench replay": "replay <inputs..>",
  "bench calibrate": "calibrate <inputs..>",
  "cassette show": "show <file>",
  "cassette prune": "prune <dir>",
} as const;

export type CommandName = keyof typeof COMMAND_LINES;

/** A command's options builder, as yargs calls it. */
export type OptionsBuilder = (y: Argv) => Argv<unknown>;

/**
 * Each command's options builder, the modules loaded: the one place each command's options are
 * declared, for a test (docs/cli.md lists every option of every command, and no other).
 */
export async function commandOptionBuilders(): Promise<Readonly<Record<CommandName, OptionsBuilder>>> {
  const [policy, bench, compare, calibrate, cassette] = await Promise.all([
    import("./policy-command.js"), import("./bench-command.js"), import("./compare-command.js"), import("./calibrate-command.js"), import("./cassette-command.js"),
  ]);
  return {
    run: runOptions, validate: validateOptions, "policy check": policy.policyCheckOptions,
    "report merge": reportMergeOptions, "report compare": compare.reportCompareOptions, "report trend": reportTrendOptions, "report html": reportHtmlOptions, "bench replay": bench.benchReplayOptions,
    "bench calibrate": calibrate.benchCalibrateOptions, "cassette show": cassette.cassetteShowOptions, "cassette prune": cassette.cassettePruneOptions,
  };
}

/** "Unknown command" for a first word (or a subcommand) that names none, else null. */
export function unknownCommand(argv: readonly string[]): string | null {
  const list = Object.entries(COMMANDS).map(([name, subs]) => (subs.length ? subs.map((sub) => `${name} ${sub}`).join(", ") : name)).join(", ");
  const [first, second] = argv;
  if (first === undefined || first.startsWith("-")) return null;
  if (!(first in COMMANDS)) return `Unknown command "${first}". The commands are: ${list}`;
  const subs = COMMANDS[first]!;
  if (subs.length > 0 && second !== undefined && !second.startsWith("-") && !subs.includes(second)) {
    return `Unknown command "${first} ${second}". The commands are: ${list}`;
  }
  return null;
}

/**
 * A command that takes a subcommand given without one (`rhema policy`), or no command at all:
 * the words whose help is shown (to stderr, exit 2) and the message after it; else null.
 */
export function missingSubcommand(argv: readonly string[]): { words: string[]; message: string } | null {
  if (argv.length === 0) return { words: [], message: `name a command: ${Object.keys(COMMANDS).join(", ")}` };
  const [first, second] = argv;
  const subs = first === undefined ? [] : COMMANDS[first] ?? [];
  if (subs.length === 0 || (second !== undefined && !second.startsWith("-")) || asksForHelpOrVersion(argv)) return null;
  return { words: [first!], message: `name a ${first} command: ${subs.join(", ")}` };
}

/** `--help`/`-h` or `--version`/`-v` among the flags (before a `--`). */
function asksForHelpOrVersion(argv: readonly string[]): boolean {
  return asksFor(argv, ["--help", "-h", "--version", "-v"]);
}

function asksFor(argv: readonly string[], flags: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => flags.includes(a));
}

/** `policy check --json`: its usage errors are a JSON `{error}` on stdout too, as its other errors are. */
function wantsJsonErrors(argv: readonly string[]): boolean {
  return argv[0] === "policy" && argv[1] === "check" && asksFor(argv, ["--json", "--json=true"]);
}

/**
 * The modules of the commands `argv` can reach, loaded on demand: `rhema run` does not pay for
 * loading `policy check`'s, `bench replay`'s or `validate`'s (start-up is mostly module loading);
 * help and version with no command load them all.
 */
async function loadCommandModules(argv: readonly string[]) {
  const [first] = argv;
  const wanted = (...names: string[]) => first === undefined || first.startsWith("-") || names.includes(first);
  // A report command's own module loads only for it (or for help).
  const reportWanted = (name: string) => wanted("report") && (argv[1] === undefined || argv[1].startsWith("-") || argv[1] === name);
  const benchWanted = (name: string) => wanted("bench") && (argv[1] === undefined || argv[1].startsWith("-") || argv[1] === name);
  const [policy, bench, other, compare, trend, calibrate, cassette] = await Promise.all([
    wanted("policy") ? import("./policy-command.js") : null,
    benchWanted("replay") ? import("./bench-command.js") : null,
    wanted("validate", "report") ? import("./other-commands.js") : null,
    reportWanted("compare") ? import("./compare-command.js") : null,
    reportWanted("trend") ? import("./trend-command.js") : null,
    benchWanted("calibrate") ? import("./calibrate-command.js") : null,
    wanted("cassette") ? import("./cassette-command.js") : null,
  ]);
  return { policy, bench, other, compare, trend, calibrate, cassette };
}

/** A command module `loadCommandModules` was asked for; yargs calls a builder or handler only for the command given. */
function loaded<T>(module: T | null): T {
  if (module === null) throw new Error("internal: a command module was not loaded for the command given");
  return module;
}

export async function main(argv: string[], io: CliIo): Promise<ExitCode> {
  const unknown = unknownCommand(argv);
  if (unknown !== null) {
    print(io.stderr, `rhema: ${unknown}\nSee \`rhema --help\`.`);
    return EXIT_INVALID_INPUT;
  }
  const missing = missingSubcommand(argv);
  const commands = await loadCommandModules(missing ? missing.words : argv);
  if (missing) {
    const words = [...missing.words, "--help"];
    const help = await renderHelp(buildParser(words, io, commands, () => Promise.resolve()), words);
    print(io.stderr, `${help}\n\nrhema: ${missing.message}`);
    return EXIT_INVALID_INPUT;
  }
  let code: ExitCode = 0;
  const run = (promise: Promise<ExitCode>) => promise.then((c) => void (code = c));
  // Paths that name nothing (an unset variable) are refused before the command reads or writes.
  const checked = (command: PathCommand, args: Record<string, unknown>, handler: () => Promise<ExitCode>) =>
    run(Promise.resolve().then(() => checkPathFlags(command, args)).then(handler));
  const parser = buildParser(argv, io, commands, checked);
  if (asksFor(argv, ["--help", "-h"])) {
    print(io.stdout, await renderHelp(parser, argv));
    return 0;
  }
  try {
    await parser.parseAsync();
  } catch (err) {
    const json = wantsJsonErrors(argv);
    if (err instanceof UsageError) {
      if (json) print(io.stdout, JSON.stringify({ error: err.message }));
      else print(io.stderr, `rhema: ${err.message}\nSee \`rhema --help\`.`);
      return EXIT_INVALID_INPUT;
    }
    if (io.interrupt.aborted) return EXIT_INTERRUPTED;
    const { code: failCode, message } = describeFailure(err);
    if (json && failCode === EXIT_INVALID_INPUT) print(io.stdout, JSON.stringify({ error: message.replace(/^rhema: /, "") }));
    else print(io.stderr, message);
    if (io.env.RHEMA_DEBUG && err instanceof Error && err.stack) print(io.stderr, err.stack);
    return failCode;
  }
  return code;
}

type CommandModules = Awaited<ReturnType<typeof loadCommandModules>>;
/** Runs a command's handler after its path flags are checked (main's `checked`). */
type Dispatch = (command: PathCommand, args: Record<string, unknown>, handler: () => Promise<ExitCode>) => Promise<void>;

/** The yargs parser of `argv`: every command, its options and examples, and `dispatch` for the handler of the one given. */
function buildParser(argv: readonly string[], io: CliIo, commands: CommandModules, checked: Dispatch): Argv {
  const parser = yargs([...argv])
    .scriptName("rhema")
    .version(packageVersion())
    .strict()
    .exitProcess(false)
    .wrap(helpWidth(io.stderr.columns, io.env))
    .fail((msg, err) => {
      throw err ?? new UsageError(oneNamePerUnknownArgument(msg));
    })
    .command(COMMAND_LINES.run, "run task suites and write reports", runOptions, (a) => checked("run", a, () => runCommand(a, io)))
    .command(COMMAND_LINES.validate, "check task files and their policies, running nothing", validateOptions, (a) => checked("validate", a, () => loaded(commands.other).validateCommand(a, io)))
    .command("policy", "policy files", (y) => y
      .command(COMMAND_LINES["policy check"], "decide one tool call under a policy", (c) => loaded(commands.policy).policyCheckOptions(c), (a) => checked("policy check", a, () => loaded(commands.policy).policyCheckCommand(a, io)))
      .demandCommand(1, "name a policy command: check"))
    .command("report", "reports", (y) => y
      .command(COMMAND_LINES["report merge"], "merge the reports of several run directories (CI shards)", reportMergeOptions, (a) => checked("report merge", a, () => loaded(commands.other).reportMergeCommand(a, io)))
      .command(COMMAND_LINES["report compare"], "compare two runs (or one run's cells): pass-rate changes with confidence intervals, cost, tokens, cache; exit 1 on a regression", (c) => loaded(commands.compare).reportCompareOptions(c), (a) => checked("report compare", a, () => loaded(commands.compare).reportCompareCommand(a, io)))
      .command(COMMAND_LINES["report trend"], "each task's pass rate, flakiness and cost over several runs, and a proposed quarantine", reportTrendOptions, (a) => checked("report trend", a, () => loaded(commands.trend).reportTrendCommand(a, io)))
      .command(COMMAND_LINES["report html"], "write a run directory's report.html: one self-contained page of its trials", reportHtmlOptions, (a) => checked("report html", a, () => loaded(commands.other).reportHtmlCommand(a, io)))
      .demandCommand(1, "name a report command: merge, compare, trend, html"))
    .command("bench", "benchmarks", (y) => y
      .command(COMMAND_LINES["bench replay"], "replay recorded sessions under compaction strategies and budgets through the prompt-cache simulator", (c) => loaded(commands.bench).benchReplayOptions(c), (a) => checked("bench replay", a, () => loaded(commands.bench).benchReplayCommand(a, io)))
      .command(COMMAND_LINES["bench calibrate"], "fit a calibrated token counter from requests with their billed prompt tokens", (c) => loaded(commands.calibrate).benchCalibrateOptions(c), (a) => checked("bench calibrate", a, () => loaded(commands.calibrate).benchCalibrateCommand(a, io)))
      .demandCommand(1, "name a bench command: replay, calibrate"))
    .command("cassette", "cassettes (run --cassette)", (y) => y
      .command(COMMAND_LINES["cassette show"], "show a cassette's exchanges: each request, its answer, usage and timing", (c) => loaded(commands.cassette).cassetteShowOptions(c), (a) => checked("cassette show", a, () => loaded(commands.cassette).cassetteShowCommand(a, io)))
      .command(COMMAND_LINES["cassette prune"], "drop the exchanges no replay used (run --cassette), keeping those the given runs' trials used", (c) => loaded(commands.cassette).cassettePruneOptions(c), (a) => checked("cassette prune", a, () => loaded(commands.cassette).cassettePruneCommand(a, io)))
      .demandCommand(1, "name a cassette command: show, prune"))
    .demandCommand(1, "name a command: run, validate, policy check, report merge, report compare, report trend, report html, bench replay, bench calibrate, cassette show, cassette prune")
    .help()
    .alias("h", "help")
    .alias("v", "version");
  withExamples(parser, [
    ["$0 run tasks/", "run the suites under tasks/ and write reports"],
    ["$0 policy check --policy preset:ci --tool shell --input '{\"command\":\"npm test\"}'", "ask a policy about one call"],
  ]);
  skipHelpPrerender(parser);
  return parser;
}

/** The help `parser` (given `--help`) renders, captured instead of printed, its examples unwrapped. */
async function renderHelp(parser: Argv, argv: readonly string[]): Promise<string> {
  let help = "";
  await parser.parseAsync([...argv], {}, (_err, _argv, output) => void (help = output));
  return expandExamples(help, "rhema");
}

class UsageError extends Error {}

/**
 * yargs renders a command's whole help text as soon as the command's handler starts, in case
 * the handler shows help later; rhema's never do, and the rendering (text wrapping through
 * cliui) was ~40 ms of every start before the first model request. `--help` still renders it.
 */
function skipHelpPrerender(parser: Argv): void {
  const internal = parser as unknown as { getInternalMethods?(): { getUsageInstance(): { cacheHelpMessage?: () => void } } };
  const usage = internal.getInternalMethods?.().getUsageInstance();
  if (usage?.cacheHelpMessage) usage.cacheHelpMessage = () => {};
}

/**
 * The CLI as this process: SIGINT/SIGTERM interrupt the run (a second is ignored, a third
 * forces the exit), the process's streams (quiet once their reader is gone), and the exit code
 * set, not forced, so pending writes finish.
 */
export async function runAsProcess(): Promise<void> {
  // Inside the user namespace the executable started it in, rhema is the host user (user-namespace-entry.ts).
  adoptHostIdentity(process.env[HOST_ID_VARIABLE]);
  const controller = new AbortController();
  installShutdownSignals(process, {
    shutdown: () => controller.abort(),
    note: (message) => process.stderr.write(`\nrhema: ${message}\n`),
    force: () => process.exit(EXIT_INTERRUPTED),
  });
  // An event loop that empties before the command ends must never read as success (exit 0).
  const net = stallNetFor(process, (message) => {
    process.stderr.write(`rhema: internal error: ${message}\n`);
    process.exit(EXIT_TASK_FAILED);
  });
  // One redactor for the run: what it writes to files and what it prints go through the same rule.
  const redactor = new SecretRedactor(process.env);
  const redact = (text: string) => redactor.redact(text);
  const stderr = redactingStream(quietOnClosedPipe(process.stderr), redact);
  // The SDKs' bare console.warn (a deprecated model, on every request): one rhema warning per message.
  const restoreWarn = routeSdkWarnings(console, (message) => print(stderr, `rhema: warning: ${message}`));
  process.exitCode = await main(hideBin(process.argv), {
    cwd: process.cwd(), env: process.env, pid: process.pid, interrupt: controller.signal, redactor, stalled: net.stalled,
    stdout: redactingStream(quietOnClosedPipe(process.stdout), redact), stderr,
  });
  restoreWarn();
  net.finish();
}

/** Set by the bundle's banner (scripts/build-cli.mjs); absent when this runs as a module. */
declare const __rhemaBundleUrl: string | undefined;

// `node dist/src/cli/main.js` runs the CLI from its modules (the `rhema` executable runs the
// bundle). In the bundle import.meta.url is the bundle's file, and its entry runs the CLI already.
if (typeof __rhemaBundleUrl === "undefined" && process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) void runAsProcess();
