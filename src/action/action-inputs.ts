/**
 * The action's inputs: read through a getter (`core.getInput` in the action, a map in tests),
 * checked, and turned into the `rhema run` request they map onto one to one (`tasks` is the
 * paths; `stopped-ok` is `--stopped-ok`, which decides the step's result), plus the action's own
 * (`fail-on`, `resume`, `comment`, `github-token`, and the pull-request gate's `baseline`,
 * `save-baseline`, `compare-fail-on`, and the report artifact's `upload-report`, `retention-days`). A run flag without an input is listed, with
 * why, in input-names.ts. A bad value is a `usage` error naming the input and what it got.
 */
import { RhemaError, parseUsd } from "../core/errors.js";
import { SANDBOX_MODES, type SandboxMode } from "../process/sandbox-mode.js";
import { WORKSPACE_LAYER_CHOICES, type WorkspaceLayersChoice } from "../runner/execute/workspace-layers.js";
import { NAMED_PROVIDERS } from "../providers/provider-registry.js";
import type { RunRequest } from "../runner/execute/run-request.js";
import { LIMIT_TEXT_RULE, parseLimitText } from "../runner/tasks/duration.js";
import { MAX_REPEATS } from "../runner/tasks/task-schema.js";
import { parsePassRate } from "../runner/trials/trial-gate.js";
import { parseKList } from "../runner/trials/trial-figures.js";
import { FAIL_ON_CHOICES as COMPARE_FAIL_ON_CHOICES, type FailOn as CompareFailOn } from "../runner/reports/compare-verdict.js";
import { baselineSource, type BaselineSource } from "./baseline.js";
import { CASSETTE_MODES, CASSETTE_USAGES } from "../runner/execute/trial-cassette.js";
import { JUNIT_CASES } from "../runner/reports/report-meta.js";

/** Every input `action.yml` declares; a test holds the two lists equal and proves each is read. */
export const ACTION_INPUT_NAMES = [
  "tasks", "policy", "provider", "model", "base-url", "concurrency", "filter", "tag", "shard", "out",
  "max-steps", "timeout", "stream-idle", "max-cost", "pricing", "sandbox", "workspace-layers", "fail-on", "resume", "comment", "github-token",
  "max-tokens", "stopped-ok", "allow-env", "retry-errored", "report-skipped", "restart-changed",
  "repeats", "min-pass-rate", "gate", "stop-early", "pass-at", "junit-cases", "matrix", "calibration", "quarantine",
  "cassette", "cassette-mode", "cassette-usage", "baseline", "save-baseline", "compare-fail-on", "comment-diffstat",
  "upload-report", "retention-days",
] as const;
export type ActionInputName = (typeof ACTION_INPUT_NAMES)[number];

/**
 * Returns the input's value (trimmed, as `core.getInput` does), or undefined when the step was
 * not given the input at all. GitHub gives every input that has a default its default, so ""
 * for such an input (`out`) was set on purpose — `out: ${{ env.UNSET }}` — and names nothing.
 */
export type InputReader = (name: ActionInputName) => string | undefined;

/**
 * When the step fails: `failure` when any task did not pass (failed, errored, stopped) or the
 * run was interrupted; `error` only when a task errored or the run could not complete; `never`.
 */
export type FailOn = "failure" | "error" | "never";

export interface ActionInputs {
  request: RunRequest;
  failOn: FailOn;
  /** `stopped-ok`: a task stopped on a budget does not fail the step (as `--stopped-ok` keeps it from failing the run). */
  stoppedOk: boolean;
  /** Restore the run directory of an earlier attempt of this workflow run (and save this one's). */
  resume: boolean;
  /** Post or update the pull request's comment. */
  comment: boolean;
  /** `comment-diffstat`: the comment also holds each trial's changes.patch as a collapsed diff stat. */
  commentDiffstat: boolean;
  githubToken: string;
  /** The run directory this run is compared with after it (`report compare`), or null: no comparison. */
  baseline: BaselineSource | null;
  /** Save this run's directory as the baseline of its workflow and branch (post step). */
  saveBaseline: boolean;
  /** When the comparison fails the step, as `report compare --fail-on`. */
  compareFailOn: CompareFailOn;
  /** `upload-report`: upload report.html and the reports as a workflow artifact (report-artifact.ts). */
  uploadReport: boolean;
  /** `retention-days`: the artifact's days, 1 to MAX_RETENTION_DAYS; null: the repository's setting. */
  retentionDays: number | null;
}

export const DEFAULT_OUT = ".rhema/runs/latest";
/** The most days GitHub keeps an artifact of a public repository (a repository may allow fewer). */
export const MAX_RETENTION_DAYS = 90;
const DEFAULT_CONCURRENCY = 4;

export class ActionInputError extends RhemaError {
  constructor(name: ActionInputName, message: string) {
    super("usage", `input "${name}": ${message}`);
  }
}

/** Reads and checks every input. */
export function readActionInputs(readInput: InputReader): ActionInputs {
  const read = (name: ActionInputName): string => readInput(name) ?? "";
  const text = (name: ActionInputName): string | undefined => nonEmpty(read(name));
  const tasks = list(read("tasks"));
  if (tasks.length === 0) throw new ActionInputError("tasks", "name at least one task file, folder or glob");
  const request: RunRequest = {
    paths: tasks,
    out: pathWithDefault("out", readInput("out"), DEFAULT_OUT),
    concurrency: wholeNumber("concurrency", text("concurrency")) ?? DEFAULT_CONCURRENCY,
    filter: list(read("filter")),
    tag: list(read("tag")),
    restartChanged: bool("restart-changed", text("restart-changed") ?? "false"),
    retryErrored: bool("retry-errored", text("retry-errored") ?? "false"),
    reportSkipped: bool("report-skipped", text("report-skipped") ?? "false"),
    allowEnv: list(read("allow-env")),
    ...optional("policy", text("policy")),
    ...optional("provider", providerName(text("provider"))),
    ...optional("model", text("model")),
    ...optional("baseUrl", text("base-url")),
    ...optional("shard", text("shard")),
    ...optional("maxSteps", wholeNumber("max-steps", text("max-steps"))),
    ...optional("timeout", limit("timeout", text("timeout"))),
    ...optional("streamIdle", limit("stream-idle", text("stream-idle"))),
    ...optional("sandbox", sandboxMode(text("sandbox"))),
    ...optional("workspaceLayers", workspaceLayers(text("workspace-layers"))),
    ...optional("maxCost", dollars("max-cost", text("max-cost"))),
    ...optional("maxTokens", wholeNumber("max-tokens", text("max-tokens"))),
    ...optional("pricing", text("pricing")),
    ...optional("matrix", text("matrix")),
    ...optional("calibration", text("calibration")),
    ...optional("repeats", repeats(text("repeats"))),
    ...optional("minPassRate", passRate(text("min-pass-rate"))),
    ...optional("gate", text("gate") === undefined ? undefined : oneOf("gate", text("gate")!, ["rate", "lower"] as const)),
    ...(bool("stop-early", text("stop-early") ?? "false") ? { stopEarly: true } : {}),
    ...optional("passAt", passAt(text("pass-at"))),
    ...optional("junitCases", text("junit-cases") === undefined ? undefined : oneOf("junit-cases", text("junit-cases")!, JUNIT_CASES)),
    ...optional("quarantine", text("quarantine")),
    ...optional("cassette", text("cassette")),
    ...optional("cassetteMode", text("cassette-mode") === undefined ? undefined : oneOf("cassette-mode", text("cassette-mode")!, CASSETTE_MODES)),
    ...optional("cassetteUsage", text("cassette-usage") === undefined ? undefined : oneOf("cassette-usage", text("cassette-usage")!, CASSETTE_USAGES)),
  };
  return {
    request,
    failOn: oneOf("fail-on", text("fail-on") ?? "failure", ["failure", "error", "never"] as const),
    stoppedOk: bool("stopped-ok", text("stopped-ok") ?? "false"),
    resume: bool("resume", text("resume") ?? "true"),
    comment: bool("comment", text("comment") ?? "false"),
    commentDiffstat: bool("comment-diffstat", text("comment-diffstat") ?? "false"),
    githubToken: read("github-token"),
    baseline: text("baseline") === undefined ? null : baselineSource(text("baseline")!),
    saveBaseline: bool("save-baseline", text("save-baseline") ?? "false"),
    compareFailOn: oneOf("compare-fail-on", text("compare-fail-on") ?? "regressed", COMPARE_FAIL_ON_CHOICES),
    uploadReport: bool("upload-report", text("upload-report") ?? "true"),
    retentionDays: retentionDays(text("retention-days")),
  };
}

/**
 * A path input that has a default: unset (undefined) takes the default; set to "" or blanks it
 * is refused, as `--out ""` is — an unset variable must not make the working directory the run
 * directory (a `--restart` there once wiped a project's tasks/).
 */
function pathWithDefault(name: ActionInputName, value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  const path = value.trim();
  if (path === "") throw new ActionInputError(name, `Expected a path, got ${JSON.stringify(value)} (is the variable it was set from unset?); leave the input out for its default ${fallback}`);
  return path;
}

/** `provider`, as `--provider` takes it: a named provider of the registry. */
function providerName(value: string | undefined): string | undefined {
  return value === undefined ? undefined : oneOf("provider", value, NAMED_PROVIDERS);
}

/** `sandbox`, as `--sandbox` takes it; empty: rhema's default (auto). */
function sandboxMode(value: string | undefined): SandboxMode | undefined {
  return value === undefined ? undefined : oneOf("sandbox", value, SANDBOX_MODES);
}

/** `workspace-layers`, as `--workspace-layers` takes it; empty: rhema's default (auto). */
function workspaceLayers(value: string | undefined): WorkspaceLayersChoice | undefined {
  return value === undefined ? undefined : oneOf("workspace-layers", value, WORKSPACE_LAYER_CHOICES);
}

/** Entries separated by newlines or commas (a YAML block or one line). */
function list(value: string): string[] {
  return value.split(/[\n,]/).map((s) => s.trim()).filter((s) => s.length > 0);
}

function nonEmpty(value: string): string | undefined {
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

function wholeNumber(name: ActionInputName, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) throw new ActionInputError(name, `Expected a whole number from 1 and up, got "${value}"`);
  return Number(value);
}

/** `repeats`: a whole number from 1 up to the most a task may have. */
function repeats(value: string | undefined): number | undefined {
  const n = wholeNumber("repeats", value);
  if (n !== undefined && n > MAX_REPEATS) throw new ActionInputError("repeats", `Expected at most ${MAX_REPEATS}, got ${n}`);
  return n;
}

/** `retention-days`: a whole number from 1 to MAX_RETENTION_DAYS; empty: the repository's setting (null). */
function retentionDays(value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^[0-9]+$/.test(value) || Number(value) < 1 || Number(value) > MAX_RETENTION_DAYS) {
    throw new ActionInputError("retention-days", `Expected a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or nothing for the repository's setting, got "${value}"`);
  }
  return Number(value);
}

/** `min-pass-rate`: a number above 0 and at most 1. */
function passRate(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const rate = parsePassRate(value);
  if (rate === null) throw new ActionInputError("min-pass-rate", `Expected a number above 0 and at most 1 (such as 0.8), got "${value}"`);
  return rate;
}

/** `pass-at`: k's such as `1,3`. */
function passAt(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  const ks = parseKList(value);
  if (!Array.isArray(ks)) throw new ActionInputError("pass-at", `Expected k's such as 1,3: ${ks.error}`);
  return ks;
}

/** A limit as `--timeout` takes it: a duration (90s, 10m, 1h), a number of seconds, or `none`; checked here to name the input. */
function limit(name: ActionInputName, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (parseLimitText(value) === null) throw new ActionInputError(name, `Expected ${LIMIT_TEXT_RULE}, got "${value}"`);
  return value;
}

/** A budget in dollars: a number above 0 (a leading `$` allowed). */
function dollars(name: ActionInputName, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = parseUsd(value);
  if (n === null) throw new ActionInputError(name, `Expected a number of dollars above 0 (such as 20 or 0.5), got "${value}"`);
  return n;
}

/** YAML 1.2 core booleans, as `core.getBooleanInput` reads them. */
function bool(name: ActionInputName, value: string): boolean {
  if (["true", "True", "TRUE"].includes(value)) return true;
  if (["false", "False", "FALSE"].includes(value)) return false;
  throw new ActionInputError(name, `Expected true or false, got "${value}"`);
}

function oneOf<T extends string>(name: ActionInputName, value: string, choices: readonly T[]): T {
  if ((choices as readonly string[]).includes(value)) return value as T;
  throw new ActionInputError(name, `Expected one of ${choices.join(", ")}, got "${value}"`);
}
