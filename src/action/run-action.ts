/**
 * The action's main step: inputs → restore the run directory of an earlier attempt → the
 * runner (the same `runRequest` as `rhema run`) → outputs, the job summary, annotations, each
 * task's log lines as a group when it ends, the pull-request comment, and the step's result under
 * `fail-on`; with a `baseline`, the comparison with it (baseline-gate.ts) under `compare-fail-on`.
 * An error that stops the run (a bad input, task, policy or pricing file) becomes
 * annotations on the files and a job summary saying what was wrong, naming the inputs. Reads
 * GitHub's environment (handed in) and talks to the runner through @actions/core; the post step
 * saves the cache (and, with `save-baseline`, the run directory as its branch's baseline).
 */
import { answerOutputs } from "./answer-outputs.js";
import { cp, readFile, rm } from "node:fs/promises";
import { existsSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import * as core from "@actions/core";
import { runRequest, type RunRequestOutcome } from "../runner/execute/run-request.js";
import { LayerMounts } from "../runner/run-dir/layer-mounts.js";
import { SecretRedactor } from "../runner/run-dir/secret-redactor.js";
import type { RunProgress } from "../runner/execute/suite-runner.js";
import { describeWorkspaces } from "../runner/execute/workspace-layers.js";
import { readActionInputs, type ActionInputs } from "./action-inputs.js";
import { actionOutputs, runAnnotations, stepFailure, type ActionRunOutcome, type Annotation } from "./action-outcome.js";
import { nameInputs } from "./input-names.js";
import { describeStartFailure } from "./start-failure.js";
import { TaskLogGroups } from "./task-log.js";
import { commentBody, commentMarker, upsertPrComment } from "./pr-comment.js";
import { diffstatComment } from "./changes-diffstat.js";
import { runCacheKeys, type CacheScope, type RunDirCache } from "./run-cache.js";
import { BASELINE_DIR, baselineNameOfKey, baselineSaveKey, keptInBaseline } from "./baseline.js";
import { compareWithBaseline } from "./baseline-gate.js";
import { REPORT_URL_OUTPUT, reportArtifactName, uploadReportArtifact } from "./report-artifact.js";
import { compareComment, compareFailure, compareOutputs, compareSummary, missingBaselineMessage, type BaselineComparison } from "./compare-gate.js";
import { counted } from "../core/counted.js";

/** Names of the state the main step leaves for the post step. */
export const STATE = { isPost: "isPost", runDir: "run_dir", cacheKey: "cache_key", resume: "resume", baselineKey: "baseline_key" } as const;

export interface ActionContext {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  pid: number;
  interrupt: AbortSignal;
  /** Aborted when the event loop emptied with the run unfinished (runner/execute/stall-net.ts). */
  stalled?: AbortSignal;
  cache: RunDirCache;
}

/** Runs the main step; the step's result is left in core's exit code (setFailed). */
export async function runAction(ctx: ActionContext): Promise<void> {
  core.saveState(STATE.isPost, "true");
  // One redactor for the run: the files it writes, and every form it replaces masked in the log.
  const redactor = new SecretRedactor(ctx.env);
  for (const form of redactor.forms()) core.setSecret(form);
  const workspace = ctx.env.GITHUB_WORKSPACE || ctx.cwd;
  let inputs: ActionInputs | undefined;
  let outcome: RunRequestOutcome;
  let interruptedTasks = 0;
  let restoredNote: string | null = null;
  try {
    inputs = readInputs(ctx.env);
    if (inputs.githubToken) core.setSecret(inputs.githubToken);
    const where = runDirAndKeys(ctx.env, workspace, inputs);
    core.saveState(STATE.runDir, where.runDir);
    core.saveState(STATE.cacheKey, where.keys.key);
    core.saveState(STATE.resume, String(inputs.resume));
    const restoredFrom = inputs.resume ? await restoreRunDir(ctx.cache, where.runDir, where.keys) : undefined;

    const groups = new TaskLogGroups();
    outcome = await runRequest(inputs.request, {
      cwd: workspace, env: ctx.env, pid: ctx.pid, interrupt: ctx.interrupt, redactor, ...(ctx.stalled ? { stalled: ctx.stalled } : {}),
      onNote: (note) => core.info(`rhema: ${nameInputs(note)}`),
      onProgress: (p) => {
        if (p.type === "task_interrupted") interruptedTasks += 1;
        logProgress(p, groups);
      },
    });
    if (restoredFrom) restoredNote = `Resumed from the run directory of an earlier attempt (cache entry \`${restoredFrom}\`).`;
  } catch (err) {
    await reportStopped(err, ctx.env, workspace, inputs);
    return;
  }
  // The job summary gets summary.md, which says it too; the annotation puts it on the run's page.
  if (outcome.sandboxWarning !== null) core.warning(`rhema: ${nameInputs(outcome.sandboxWarning)}`, { title: "rhema ran without a sandbox" });
  const result: ActionRunOutcome = { ...outcome, interruptedTasks };
  for (const [name, value] of Object.entries(actionOutputs(result))) core.setOutput(name, value);
  for (const [name, value] of Object.entries(await answerOutputs(outcome.results, outcome.runDir))) core.setOutput(name, value);
  const where = runDirAndKeys(ctx.env, workspace, inputs);
  // The reports are final here (also of a failed or interrupted run): upload them before the summary and the comment link them.
  const reportUrl = inputs.uploadReport ? await uploadReports(ctx.env, inputs, outcome.runDir) : null;
  core.setOutput(REPORT_URL_OUTPUT, reportUrl ?? "");
  const notes = [restoredNote, reportUrl === null ? null : reportLinkNote(reportUrl)];
  let compared: BaselineComparison | null = null;
  try {
    compared = inputs.baseline === null ? null : await compareWithBaseline(inputs.baseline, { cache: ctx.cache, workspace, runDir: outcome.runDir, shard: inputs.request.shard ?? null, log: (line) => core.info(`rhema: ${line}`) });
  } catch (err) {
    // An unreadable baseline (not a run directory, a broken file) fails the step; the run's reports stand.
    core.setOutput("regressed", "0");
    core.setOutput("improved", "0");
    await appendJobSummary(ctx.env, outcome, notes, null);
    for (const a of runAnnotations(result, workspace)) annotate(a);
    core.setFailed(`rhema: the \`baseline\` input: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  for (const [name, value] of Object.entries(compared === null ? { regressed: "0", improved: "0" } : compareOutputs(compared))) core.setOutput(name, value);
  if (compared?.kind === "missing") core.warning(`rhema: ${missingBaselineMessage(compared)}`, { title: "rhema: no baseline" });
  await appendJobSummary(ctx.env, outcome, notes, compared);
  for (const a of runAnnotations(result, workspace)) annotate(a);
  if (inputs.comment) await commentOnPullRequest(ctx.env, inputs, where.scope, outcome, { compared, reportUrl });
  // The post step saves a baseline only of a run that completed: an interrupted or refused one is partial.
  if (inputs.saveBaseline && !outcome.interrupted && outcome.refusals.length === 0) core.saveState(STATE.baselineKey, baselineKeyOf(ctx.env, inputs));
  const failures = [stepFailure(inputs.failOn, result, { stoppedOk: inputs.stoppedOk }), compared === null ? null : compareFailure(compared, inputs.compareFailOn)].filter((f) => f !== null);
  if (failures.length > 0) core.setFailed(`rhema: ${failures.join("; ")}`);
}

/**
 * `upload-report`: the run's reports as the artifact `rhema-report-<job>-<shard>-<attempt>`
 * (report-artifact.ts). Its URL, or null when it was not uploaded: a warning, never a failed
 * step; the reports stay in the run directory.
 */
async function uploadReports(env: ActionContext["env"], inputs: ActionInputs, runDir: string): Promise<string | null> {
  const scope = cacheScope(env, inputs, "");
  const upload = await uploadReportArtifact(runDir, reportArtifactName({ job: scope.job, shard: scope.shard, attempt: scope.attempt }), { env, retentionDays: inputs.retentionDays });
  if (upload.kind === "failed") {
    core.warning(`rhema: report.html and the reports were not uploaded as the artifact ${upload.name}: ${upload.message}; they stay in ${runDir}`, { title: "rhema: no report artifact" });
    return null;
  }
  core.info(`rhema: uploaded ${upload.files.join(", ")} as the artifact ${upload.name} (${upload.url})`);
  return upload.url;
}

/** The job summary's line linking the report artifact. */
function reportLinkNote(url: string): string {
  return `[report.html (artifact)](${url}): the run viewer with junit.xml, stats.json and summary.md.`;
}

/** The key this run's baseline is saved under (`save-baseline`). */
function baselineKeyOf(env: ActionContext["env"], inputs: ActionInputs): string {
  const scope = cacheScope(env, inputs, "");
  return baselineSaveKey({ workflow: scope.workflow, ref: env.GITHUB_REF_NAME || "local", shard: scope.shard, runId: scope.runId, attempt: scope.attempt });
}

/** The inputs as GitHub passes them: one the step was not given at all is undefined, one set to "" (an unset variable) is "". */
function readInputs(env: ActionContext["env"]): ActionInputs {
  return readActionInputs((name) => (env[inputVariable(name)] === undefined ? undefined : core.getInput(name)));
}

/** Where the run directory is and the cache keys it is saved under: from the inputs and GitHub's variables (the main and post steps agree). */
function runDirAndKeys(env: ActionContext["env"], workspace: string, inputs: ActionInputs): { runDir: string; scope: CacheScope; keys: ReturnType<typeof runCacheKeys> } {
  const runDir = resolve(workspace, inputs.request.out);
  const scope = cacheScope(env, inputs, relative(workspace, runDir));
  return { runDir, scope, keys: runCacheKeys(scope) };
}

/** One workflow command for an annotation. */
function annotate(a: Annotation): void {
  const props = { title: a.title, ...(a.file ? { file: a.file } : {}), ...(a.line !== undefined ? { startLine: a.line } : {}), ...(a.column !== undefined ? { startColumn: a.column } : {}) };
  if (a.level === "error") core.error(a.message, props);
  else if (a.level === "warning") core.warning(a.message, props);
  else core.notice(a.message, props);
}

/**
 * An error stopped the run (before it started: a bad input, task, policy or pricing file; or
 * while it ran): annotations on the files, a job summary saying what was wrong, the step failed.
 */
async function reportStopped(err: unknown, env: ActionContext["env"], workspace: string, inputs: ActionInputs | undefined): Promise<void> {
  const request = inputs?.request;
  const fileInputs = {
    ...(request?.policy !== undefined ? { policy: request.policy.startsWith("preset:") ? request.policy : resolve(workspace, request.policy) } : {}),
    ...(request?.pricing !== undefined ? { pricing: resolve(workspace, request.pricing) } : {}),
  };
  const stopped = describeStartFailure(err, workspace, fileInputs, isFile);
  for (const a of stopped.annotations) annotate(a);
  if (env.GITHUB_STEP_SUMMARY) {
    try {
      await core.summary.addRaw(stopped.summary, true).write();
    } catch (summaryErr) {
      core.warning(`rhema: could not write the job summary: ${summaryErr instanceof Error ? summaryErr.message : String(summaryErr)}`);
    }
  }
  core.setFailed(`rhema: ${stopped.failure}`);
  if (env.RHEMA_DEBUG && err instanceof Error && err.stack) core.debug(err.stack);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The post step (`post-if: always()`): saves the run directory under this attempt's key. The
 * main step's state names both; without it (`@github/local-action` keeps no state from main to
 * post) they are derived from the inputs as the main step derived them.
 */
export async function runPostAction(cache: RunDirCache, ctx: Pick<ActionContext, "env" | "cwd">): Promise<void> {
  const saved = postState(ctx);
  if (saved === null || (!saved.resume && saved.baselineKey === null)) return;
  const { runDir, key } = saved;
  if (!existsSync(runDir)) {
    core.info("rhema: no run directory to save");
    return;
  }
  if (saved.resume) {
    try {
      // A main step stopped mid-run leaves its layered workspaces mounted: the cache must hold the layers at rest, never a live mount.
      await new LayerMounts(runDir).unmountLeftovers();
      await cache.save(runDir, key);
      core.info(`rhema: saved ${runDir} to the ${cache.name} as ${key}`);
    } catch (err) {
      core.warning(`rhema: could not save the run directory to the ${cache.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (saved.baselineKey !== null) await saveBaseline(cache, runDir, saved.baselineKey, ctx.env.GITHUB_WORKSPACE || ctx.cwd);
}

/**
 * `save-baseline`: copies the run directory (without its lock and the trials' workspaces) to
 * BASELINE_DIR — the one path the Actions cache restores it to in another job — and saves it
 * under `key`. A failure is a warning: the run itself stands.
 */
async function saveBaseline(cache: RunDirCache, runDir: string, key: string, workspace: string): Promise<void> {
  const staged = resolve(workspace, BASELINE_DIR);
  try {
    await rm(staged, { recursive: true, force: true });
    await cp(runDir, staged, { recursive: true, verbatimSymlinks: true, filter: (src) => keptInBaseline(relative(runDir, src).split(sep).join("/")) });
    await cache.save(staged, key);
    core.info(`rhema: saved the run directory as the baseline ${key} to the ${cache.name}; a pull request's job restores it with \`baseline: ${baselineNameOfKey(key)}\``);
  } catch (err) {
    core.warning(`rhema: could not save the baseline to the ${cache.name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The run directory, cache key and resume setting: the main step's state, else the inputs'; null when neither says (the inputs were bad). */
function postState(ctx: Pick<ActionContext, "env" | "cwd">): { runDir: string; key: string; resume: boolean; baselineKey: string | null } | null {
  const runDir = core.getState(STATE.runDir);
  const key = core.getState(STATE.cacheKey);
  if (runDir && key) return { runDir, key, resume: core.getState(STATE.resume) === "true", baselineKey: core.getState(STATE.baselineKey) || null };
  // The main step saves its state once the inputs are read: with the isPost mark alone, they were bad.
  if (core.getState(STATE.isPost) === "true") return null;
  try {
    const inputs = readInputs(ctx.env);
    const where = runDirAndKeys(ctx.env, ctx.env.GITHUB_WORKSPACE || ctx.cwd, inputs);
    return { runDir: where.runDir, key: where.keys.key, resume: inputs.resume, baselineKey: inputs.saveBaseline ? baselineKeyOf(ctx.env, inputs) : null };
  } catch (err) {
    core.info(`rhema: no run directory to save (${err instanceof Error ? err.message : String(err)})`);
    return null;
  }
}

/** The variable GitHub passes an input in (`INPUT_MAX-STEPS` for `max-steps`, as @actions/core reads it). */
function inputVariable(name: string): string {
  return `INPUT_${name.replace(/ /g, "_").toUpperCase()}`;
}

function assertNever(value: never): never {
  throw new Error(`unexpected value ${String(value)}`);
}

function cacheScope(env: ActionContext["env"], inputs: ActionInputs, out: string): CacheScope {
  const attempt = Number(env.GITHUB_RUN_ATTEMPT ?? "1");
  return {
    workflow: env.GITHUB_WORKFLOW || "workflow",
    job: env.GITHUB_JOB || "job",
    shard: inputs.request.shard ?? null,
    out,
    runId: env.GITHUB_RUN_ID || "local",
    attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : 1,
  };
}

/** Restores an earlier attempt's run directory, unless one is already here (it is resumed as is). */
async function restoreRunDir(cache: RunDirCache, runDir: string, keys: ReturnType<typeof runCacheKeys>): Promise<string | undefined> {
  if (existsSync(runDir)) {
    core.info(`rhema: ${runDir} exists; resuming from it without restoring`);
    return undefined;
  }
  try {
    const hit = await cache.restore(runDir, keys);
    core.info(hit ? `rhema: restored ${runDir} from the ${cache.name} (${hit})` : `rhema: no earlier attempt in the ${cache.name}; starting afresh`);
    return hit;
  } catch (err) {
    core.warning(`rhema: could not restore the run directory from the ${cache.name}: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/** Live lines at each task's start and end; its own lines as one group when it ends (task-log.ts). */
function logProgress(p: RunProgress, groups: TaskLogGroups): void {
  switch (p.type) {
    case "run_start":
      core.info(`rhema: ${p.resumed ? "resuming" : "starting"} ${counted(p.tasks, "task")}${p.trials !== p.tasks ? ` (${counted(p.trials, "trial")})` : ""} in ${p.runDir}${p.workspaces ? `; workspaces: ${describeWorkspaces(p.workspaces)}` : ""}`);
      return;
    case "task_start":
      core.info(`▶ ${p.trial.label}`);
      return;
    case "task_event":
      groups.add(p.trial.label, p.event);
      return;
    case "task_end":
      printGroup(groups, p.trial.label, `${p.result.status === "passed" ? "✔" : "✖"} ${p.trial.label}: ${p.result.status}${p.kept ? " (kept from an earlier attempt)" : ""}`);
      return;
    case "task_interrupted":
      printGroup(groups, p.trial.label, `⏸ ${p.trial.label}: interrupted; checkpointed`);
      return;
    case "trial_skipped":
      core.info(`⏭ ${p.trial.label}: skipped (gate decided)`);
      return;
    case "run_end":
      return;
    default:
      return assertNever(p);
  }
}

/** The task's end line, as the title of the group of its lines when it logged any. */
function printGroup(groups: TaskLogGroups, key: string, title: string): void {
  const group = groups.end(key, title);
  if (group === null) {
    core.info(title);
    return;
  }
  core.startGroup(group.title);
  for (const line of group.lines) core.info(line);
  core.endGroup();
}

/** Appends the run's summary.md (and any notes), then the comparison with the baseline, to the job summary; never overwrites it. */
async function appendJobSummary(env: ActionContext["env"], outcome: RunRequestOutcome, notes: ReadonlyArray<string | null>, compared: BaselineComparison | null): Promise<void> {
  if (!env.GITHUB_STEP_SUMMARY) {
    core.info("rhema: GITHUB_STEP_SUMMARY is not set; no job summary written");
    return;
  }
  const text = await readFile(outcome.reports.summary, "utf8");
  for (const note of notes) if (note) core.summary.addRaw(note, true).addEOL();
  core.summary.addRaw(text, true);
  if (compared !== null) core.summary.addEOL().addRaw(compareSummary(compared), true);
  await core.summary.write();
}

/** Each trial's changes.patch as the comment's collapsed diff stat (changes-diffstat.ts). */
async function changesDiffstat(outcome: RunRequestOutcome): Promise<string> {
  const trials = await Promise.all(outcome.results.flatMap((r) => (r.changes?.path ? [{ result: r, path: join(outcome.runDir, r.changes.path), truncated: r.changes.truncated }] : []))
    .map(async ({ result, path, truncated }) => ({
      label: `${result.suite}/${result.id}${result.trial && result.trial.repeat > 1 ? `#${result.trial.repeat}` : ""}${result.trial?.variant ? `@${result.trial.variant}` : ""}`,
      text: await readFile(path, "utf8").catch(() => null), truncated,
    })));
  return diffstatComment(trials);
}

/** The sticky comment: with a baseline, the comparison's regressions and improvements first, then the run's summary. */
async function commentOnPullRequest(env: ActionContext["env"], inputs: ActionInputs, scope: CacheScope, outcome: RunRequestOutcome, extra: { compared: BaselineComparison | null; reportUrl: string | null }): Promise<void> {
  const { compared, reportUrl } = extra;
  const pullNumber = await pullRequestNumber(env.GITHUB_EVENT_PATH);
  const [owner, repo] = (env.GITHUB_REPOSITORY ?? "").split("/");
  if (pullNumber === null || !owner || !repo) {
    core.info("rhema: comment: this run is not for a pull request; no comment");
    return;
  }
  if (!inputs.githubToken) {
    core.warning("rhema: comment: no github-token; no comment");
    return;
  }
  const server = env.GITHUB_SERVER_URL || "https://github.com";
  const runUrl = `${server}/${owner}/${repo}/actions/runs/${env.GITHUB_RUN_ID}/attempts/${env.GITHUB_RUN_ATTEMPT ?? "1"}`;
  const marker = commentMarker(scope);
  const summary = await readFile(outcome.reports.summary, "utf8");
  const diffstat = inputs.commentDiffstat ? await changesDiffstat(outcome) : "";
  const body = commentBody(marker, `${compared === null ? "" : `${compareComment(compared)}\n`}${diffstat === "" ? "" : `${diffstat}\n`}${summary}`, { runUrl, reportUrl });
  try {
    const result = await upsertPrComment({ apiUrl: env.GITHUB_API_URL || "https://api.github.com", token: inputs.githubToken, owner, repo, pullNumber }, marker, body);
    if (result.kind === "forbidden") core.warning(`rhema: comment: ${result.message}`);
    else core.info(`rhema: comment ${result.kind} (#${result.id})`);
  } catch (err) {
    core.warning(`rhema: comment: could not write the pull request comment: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function pullRequestNumber(eventPath: string | undefined): Promise<number | null> {
  if (!eventPath) return null;
  try {
    const event = JSON.parse(await readFile(eventPath, "utf8")) as { pull_request?: { number?: unknown } };
    const n = event.pull_request?.number;
    return typeof n === "number" ? n : null;
  } catch {
    return null;
  }
}
