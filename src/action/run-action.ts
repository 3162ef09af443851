/**
 * The action's main step: inputs → restore the run directory of an earlier attempt → the
 * runner (the same `runRequest` as `rhema run`) → outputs, the job summary, annotations, the
 * pull-request comment, and the step's result under `fail-on`. Reads GitHub's environment
 * (handed in) and talks to the runner through @actions/core; the post step saves the cache.
 */
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { relative, resolve } from "node:path";
import * as core from "@actions/core";
import { runRequest, type RunRequestOutcome } from "../runner/execute/run-request.js";
import { SecretRedactor } from "../runner/execute/secret-redactor.js";
import type { RunProgress } from "../runner/execute/suite-runner.js";
import { taskKey } from "../runner/run-dir/task-result.js";
import { readActionInputs, type ActionInputs } from "./action-inputs.js";
import { actionOutputs, runAnnotations, stepFailure, type ActionRunOutcome } from "./action-outcome.js";
import { commentBody, commentMarker, upsertPrComment } from "./pr-comment.js";
import { runCacheKeys, type CacheScope, type RunDirCache } from "./run-cache.js";
import { counted } from "../core/counted.js";

/** Names of the state the main step leaves for the post step. */
export const STATE = { isPost: "isPost", runDir: "run_dir", cacheKey: "cache_key", resume: "resume" } as const;

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
  // An input the step was not given at all is undefined; one set to "" (an unset variable) is "".
  const inputs = readActionInputs((name) => (ctx.env[inputVariable(name)] === undefined ? undefined : core.getInput(name)));
  if (inputs.githubToken) core.setSecret(inputs.githubToken);

  const workspace = ctx.env.GITHUB_WORKSPACE || ctx.cwd;
  const runDir = resolve(workspace, inputs.request.out);
  const scope = cacheScope(ctx.env, inputs, relative(workspace, runDir));
  const keys = runCacheKeys(scope);
  core.saveState(STATE.runDir, runDir);
  core.saveState(STATE.cacheKey, keys.key);
  core.saveState(STATE.resume, String(inputs.resume));
  const restoredFrom = inputs.resume ? await restoreRunDir(ctx.cache, runDir, keys) : undefined;

  let interruptedTasks = 0;
  const outcome = await runRequest(inputs.request, {
    cwd: workspace, env: ctx.env, pid: ctx.pid, interrupt: ctx.interrupt, redactor, ...(ctx.stalled ? { stalled: ctx.stalled } : {}),
    onNote: (note) => core.info(`rhema: ${note}`),
    onProgress: (p) => {
      if (p.type === "task_interrupted") interruptedTasks += 1;
      logProgress(p);
    },
  });
  // The job summary gets summary.md, which says it too; the annotation puts it on the run's page.
  if (outcome.sandboxWarning !== null) core.warning(`rhema: ${outcome.sandboxWarning}`, { title: "rhema ran without a sandbox" });
  const result: ActionRunOutcome = { ...outcome, interruptedTasks };
  for (const [name, value] of Object.entries(actionOutputs(result))) core.setOutput(name, value);
  await appendJobSummary(ctx.env, outcome, [restoredFrom ? `Resumed from the run directory of an earlier attempt (cache entry \`${restoredFrom}\`).` : null]);
  for (const a of runAnnotations(result, workspace)) {
    const props = { title: a.title, ...(a.file ? { file: a.file } : {}) };
    if (a.level === "error") core.error(a.message, props);
    else if (a.level === "warning") core.warning(a.message, props);
    else core.notice(a.message, props);
  }
  if (inputs.comment) await commentOnPullRequest(ctx.env, inputs, scope, outcome);
  const failure = stepFailure(inputs.failOn, result);
  if (failure) core.setFailed(`rhema: ${failure}`);
}

/** The post step (`post-if: always()`): saves the run directory under this attempt's key. */
export async function runPostAction(cache: RunDirCache): Promise<void> {
  if (core.getState(STATE.resume) !== "true") return;
  const runDir = core.getState(STATE.runDir);
  const key = core.getState(STATE.cacheKey);
  if (!runDir || !key || !existsSync(runDir)) {
    core.info("rhema: no run directory to save");
    return;
  }
  try {
    await cache.save(runDir, key);
    core.info(`rhema: saved ${runDir} to the ${cache.name} as ${key}`);
  } catch (err) {
    core.warning(`rhema: could not save the run directory to the ${cache.name}: ${err instanceof Error ? err.message : String(err)}`);
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

function logProgress(p: RunProgress): void {
  switch (p.type) {
    case "run_start":
      core.info(`rhema: ${p.resumed ? "resuming" : "starting"} ${counted(p.tasks, "task")} in ${p.runDir}`);
      return;
    case "task_start":
      core.info(`▶ ${taskKey(p.task)}`);
      return;
    case "task_end":
      core.info(`${p.result.status === "passed" ? "✔" : "✖"} ${taskKey(p.task)}: ${p.result.status}${p.kept ? " (kept from an earlier attempt)" : ""}`);
      return;
    case "task_interrupted":
      core.info(`⏸ ${taskKey(p.task)}: interrupted; checkpointed`);
      return;
    case "task_event":
    case "run_end":
      return;
    default:
      return assertNever(p);
  }
}

/** Appends the run's summary.md (and any notes) to the job summary; never overwrites it. */
async function appendJobSummary(env: ActionContext["env"], outcome: RunRequestOutcome, notes: ReadonlyArray<string | null>): Promise<void> {
  if (!env.GITHUB_STEP_SUMMARY) {
    core.info("rhema: GITHUB_STEP_SUMMARY is not set; no job summary written");
    return;
  }
  const text = await readFile(outcome.reports.summary, "utf8");
  for (const note of notes) if (note) core.summary.addRaw(note, true).addEOL();
  await core.summary.addRaw(text, true).write();
}

async function commentOnPullRequest(env: ActionContext["env"], inputs: ActionInputs, scope: CacheScope, outcome: RunRequestOutcome): Promise<void> {
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
  const body = commentBody(marker, await readFile(outcome.reports.summary, "utf8"), runUrl);
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
