/**
 * Running a selection of tasks in one run directory: ordered results whatever finished first,
 * reports, changed-task refusal and restart, the selection against the run's manifest (subset,
 * add, restart), reports of an interrupted run, the appended summary, the wall time across
 * resumes, usage errors, and the lock always released.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { allowAll, type Approval } from "../../../src/core/approval.js";
import { RhemaError } from "../../../src/core/errors.js";
import { ScriptedProvider } from "../../../src/providers/scripted.js";
import { processCommandRunner } from "../../../src/runner/execute/command-runner.js";
import { RunLockedError } from "../../../src/runner/run-dir/run-lock.js";
import { RunDir, readRunResults } from "../../../src/runner/run-dir/run-dir.js";
import { SecretRedactor } from "../../../src/runner/run-dir/secret-redactor.js";
import { ChangedTasksError } from "../../../src/runner/execute/run-reopening.js";
import { SelectionOutsideRunError, runSuite, type RunProgress, type SuiteRunOptions } from "../../../src/runner/execute/suite-runner.js";
import { loadTaskFile, type TaskDefinition } from "../../../src/runner/tasks/task-file.js";
import { taskKey } from "../../../src/runner/tasks/task-key.js";
import { writeFiles } from "../../support/suite-files.js";
import { tempDir } from "../../support/temp-dir.js";
import { exists } from "../../support/wait.js";

const AT = "2026-03-04T05:06:07.000Z";
const SHELL_ENV: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" };
const lockPath = (runDir: string) => new RunDir(runDir).lockPath;
const readManifest = (runDir: string) => new RunDir(runDir).readManifest();
/** The folder of a task's first trial. */
const folderOf = (runDir: string, task: TaskDefinition) => new RunDir(runDir).trial({ suite: task.suite, id: task.id, variant: null, repeat: 1 });

/** A scripted task that runs `sleep SECONDS` in its shell, then passes its check. */
const sleepingTask = (seconds: number) => `prompt: Wait a little.
model:
  provider: scripted
  script:
    - call: shell
      input: { command: "sleep ${seconds} && echo slept > done.txt" }
    - say: slept ${seconds}s
checks:
  - { name: slept, run: "test -f done.txt" }
`;

async function writeSuite(root: string, files: Record<string, string>): Promise<TaskDefinition[]> {
  await writeFiles(root, files);
  return Promise.all(Object.keys(files).filter((f) => f.endsWith(".yaml")).map((f) => loadTaskFile(join(root, f))));
}

function options(runDir: string, tasks: readonly TaskDefinition[], extra: Partial<SuiteRunOptions> = {}): SuiteRunOptions & { progress: RunProgress[] } {
  const progress: RunProgress[] = [];
  return {
    tasks, runDir, concurrency: 3, restartChanged: false, signal: new AbortController().signal, pid: process.pid,
    env: {
      now: () => new Date(AT),
      redactor: new SecretRedactor({}),
      runCommand: processCommandRunner({ baseEnv: SHELL_ENV }),
      providerFor: ({ task }) => new ScriptedProvider(task.model?.provider === "scripted" ? task.model.script : [], { record: false }),
      approvalFor: () => allowAll,
      defaults: {},
      commandsFor: () => ({ env: SHELL_ENV, allowEnv: [] }),
      hostEnv: SHELL_ENV,
    },
    onProgress: (p) => progress.push(p),
    progress,
    ...extra,
  };
}

const ended = (progress: RunProgress[]) => progress.flatMap((p) => (p.type === "task_end" ? [taskKey(p.task)] : []));

test("returns the results sorted by suite and id, whatever order the tasks finished in", async (t) => {
  const root = await tempDir(t);
  const tasks = await writeSuite(root, {
    "beta/quick.yaml": sleepingTask(0),
    "alpha/slow.yaml": sleepingTask(1.2),
    "alpha/mid.yaml": sleepingTask(1),
  });
  const opts = options(join(root, "run"), tasks);
  const outcome = await runSuite(opts);
  // Side by side, the one that does not sleep ends first (the order of the two sleepers is the machine's under load).
  assert.equal(ended(opts.progress)[0], "beta/quick");
  assert.deepEqual(outcome.results.map((r) => [taskKey(r), r.status]), [["alpha/mid", "passed"], ["alpha/slow", "passed"], ["beta/quick", "passed"]]);
  assert.equal(outcome.interrupted, false);
  assert.deepEqual(await readRunResults(opts.runDir), outcome.results);
  assert.deepEqual(opts.progress[0], { type: "run_start", runDir: opts.runDir, runId: (await readManifest(opts.runDir))!.runId, tasks: 3, trials: 3, resumed: false });
  // The refusals are the outcome's (the edge says them); run_end carries each trial's refusedBy.
  const { plans: _plans, refusals: _refusals, ...told } = outcome;
  assert.deepEqual(opts.progress.at(-1), { type: "run_end", ...told });
});

test("writes the three reports into the run directory", async (t) => {
  const root = await tempDir(t);
  const tasks = await writeSuite(root, { "alpha/one.yaml": sleepingTask(0), "alpha/two.yaml": sleepingTask(0) });
  const runDir = join(root, "run");
  const outcome = await runSuite(options(runDir, tasks));
  assert.deepEqual(outcome.reports, { junit: join(runDir, "junit.xml"), stats: join(runDir, "stats.json"), summary: join(runDir, "summary.md") });
  assert.match(await readFile(outcome.reports.junit, "utf8"), /<testsuites[^>]* tests="2"/);
  assert.equal(JSON.parse(await readFile(outcome.reports.stats, "utf8")).tasks.length, 2);
  assert.match(await readFile(outcome.reports.summary, "utf8"), /2 of 2 tasks passed/);
});

test("a second run keeps the run's id and start and counts the resume", async (t) => {
  const root = await tempDir(t);
  const tasks = await writeSuite(root, { "alpha/one.yaml": sleepingTask(0) });
  const runDir = join(root, "run");
  await runSuite(options(runDir, tasks));
  const first = await readManifest(runDir);
  const again = options(runDir, tasks, { env: { ...options(runDir, tasks).env, now: () => new Date("2030-01-01T00:00:00Z") } });
  const outcome = await runSuite(again);
  assert.deepEqual(await readManifest(runDir), { ...first!, resumes: 1 });
  assert.deepEqual(again.progress.filter((p) => p.type === "task_end").map((p) => p.type === "task_end" && p.kept), [true]);
  assert.equal(outcome.results[0]!.finishedAt, AT, "the kept result is the first run's");
});

test("refuses tasks whose file changed since their run started, and releases the lock", async (t) => {
  const root = await tempDir(t);
  const runDir = join(root, "run");
  const [one, two] = await writeSuite(root, { "alpha/one.yaml": sleepingTask(0), "alpha/two.yaml": sleepingTask(0) });
  await runSuite(options(runDir, [one!, two!]));
  await writeFile(one!.file, sleepingTask(0.1));
  const changed = await loadTaskFile(one!.file);
  const opts = options(runDir, [changed, two!]);
  await assert.rejects(runSuite(opts), (err: unknown) =>
    err instanceof ChangedTasksError && err.code === "task_changed" &&
    err.message === `these task files changed since their run started:\n  alpha/one (${one!.file})\nrun them afresh with --restart-changed, or pass another --out`);
  assert.deepEqual(opts.progress, [], "nothing started");
  assert.equal(await exists(lockPath(runDir)), false);
});

test("with restartChanged, a changed task's folder is wiped and the task runs afresh", async (t) => {
  const root = await tempDir(t);
  const runDir = join(root, "run");
  const [one, two] = await writeSuite(root, { "alpha/one.yaml": sleepingTask(0), "alpha/two.yaml": sleepingTask(0) });
  await runSuite(options(runDir, [one!, two!]));
  await writeFile(join(folderOf(runDir, one!).dir, "left-over.txt"), "from the old run\n");
  await writeFile(join(folderOf(runDir, two!).dir, "left-over.txt"), "from the old run\n");
  await writeFile(one!.file, sleepingTask(0.1));
  const changed = await loadTaskFile(one!.file);
  const opts = options(runDir, [changed, two!], { restartChanged: true });
  const outcome = await runSuite(opts);
  assert.equal(await exists(join(folderOf(runDir, one!).dir, "left-over.txt")), false, "the changed task's folder was wiped");
  assert.equal(await exists(join(folderOf(runDir, two!).dir, "left-over.txt")), true, "the unchanged one was not");
  assert.deepEqual(opts.progress.flatMap((p) => (p.type === "task_end" ? [[taskKey(p.task), p.kept]] : [])).sort(), [["alpha/one", false], ["alpha/two", true]]);
  assert.deepEqual(outcome.results.map((r) => [taskKey(r), r.contentHash]), [["alpha/one", changed.contentHash], ["alpha/two", two!.contentHash]]);
});

for (const concurrency of [0, -1, 1.5, Number.NaN]) {
  test(`concurrency ${concurrency} is a usage error saying what it got, before the lock is taken`, async (t) => {
    const runDir = join(await tempDir(t), "run");
    await assert.rejects(runSuite(options(runDir, [], { concurrency })), (err: unknown) =>
      err instanceof RhemaError && err.code === "usage" && err.message === `Expected --concurrency to be a whole number from 1 and up, got ${concurrency}`);
    assert.equal(await exists(runDir), false);
  });
}

test("releases the lock at the end of a run", async (t) => {
  const root = await tempDir(t);
  const tasks = await writeSuite(root, { "alpha/one.yaml": sleepingTask(0) });
  const runDir = join(root, "run");
  await runSuite(options(runDir, tasks));
  assert.equal(await exists(lockPath(runDir)), false);
});

test("releases the lock when a task folder is corrupt and the run fails", async (t) => {
  const root = await tempDir(t);
  const [one] = await writeSuite(root, { "alpha/one.yaml": sleepingTask(0) });
  const runDir = join(root, "run");
  // A run directory (its manifest written by a first run) whose task folder is then torn.
  await runSuite(options(runDir, [one!]));
  await writeFiles(folderOf(runDir, one!).dir, { "task-state.json": "{torn" });
  await assert.rejects(runSuite(options(runDir, [one!])), (err: unknown) => err instanceof RhemaError && err.code === "state_invalid");
  assert.equal(await exists(lockPath(runDir)), false);
});

test("a task that throws (a corrupt result.json) fails the run with its error, starts no further task, and releases the lock", async (t) => {
  const root = await tempDir(t);
  const [one, two] = await writeSuite(root, { "alpha/one.yaml": sleepingTask(0), "alpha/two.yaml": sleepingTask(0) });
  const runDir = join(root, "run");
  await runSuite(options(runDir, [one!]));
  const resultFile = folderOf(runDir, one!).path("result");
  await writeFile(resultFile, "{torn");
  const opts = options(runDir, [one!, two!], { concurrency: 1, selection: "add" });
  await assert.rejects(runSuite(opts), (err: unknown) =>
    err instanceof RhemaError && err.code === "result_invalid" && err.message.startsWith(`${resultFile}: not valid JSON`));
  assert.deepEqual(opts.progress.map((p) => (p.type === "task_start" ? `start ${taskKey(p.task)}` : p.type)), ["run_start"], "the task with the torn result never started");
  assert.equal(await exists(lockPath(runDir)), false);
});

test("refuses a run directory another live runner holds, and leaves its lock alone", async (t) => {
  const root = await tempDir(t);
  const tasks = await writeSuite(root, { "alpha/one.yaml": sleepingTask(0) });
  const runDir = join(root, "run");
  const other = spawn("sleep", ["30"], { stdio: "ignore" });
  t.after(() => other.kill("SIGKILL"));
  await new RunDir(runDir).lock(other.pid!, new Date());
  await assert.rejects(runSuite(options(runDir, tasks)), (err: unknown) => err instanceof RunLockedError && err.message.includes(`pid ${other.pid}`));
  assert.equal(JSON.parse(await readFile(lockPath(runDir), "utf8")).pid, other.pid);
});

test("an interrupted run starts no further task, reports interrupted, and releases the lock", async (t) => {
  const root = await tempDir(t);
  const tasks = await writeSuite(root, { "alpha/one.yaml": sleepingTask(0), "alpha/two.yaml": sleepingTask(0) });
  const runDir = join(root, "run");
  const controller = new AbortController();
  controller.abort();
  const opts = options(runDir, tasks, { signal: controller.signal });
  const outcome = await runSuite(opts);
  assert.deepEqual({ results: outcome.results, interrupted: outcome.interrupted }, { results: [], interrupted: true });
  assert.deepEqual(opts.progress.map((p) => p.type), ["run_start", "run_end"]);
  assert.equal(await exists(lockPath(runDir)), false);
});

test("retryErrored continues a task a provider outage errored, and keeps one a bug errored (internal)", async (t) => {
  const root = await tempDir(t);
  const tasks = await writeSuite(root, {
    "alpha/buggy.yaml": sleepingTask(0),
    "alpha/outage.yaml": "prompt: Say done.\nmodel:\n  provider: scripted\n  script:\n    - say: done\n      fail: { message: overloaded, times: 1 }\n",
  });
  const runDir = join(root, "run");
  // One provider per task across both runs, so the outage is over when the retry comes.
  const providers = new Map<string, ScriptedProvider>();
  const providerFor = ({ task }: { task: TaskDefinition }) => {
    const made = providers.get(taskKey(task)) ?? new ScriptedProvider(task.model?.provider === "scripted" ? task.model.script : [], { record: false });
    providers.set(taskKey(task), made);
    return made;
  };
  const buggyApproval: Approval = { decide: () => { throw new TypeError("Cannot read properties of undefined (reading 'rules')"); } };
  const base = options(runDir, tasks).env;
  const first = await runSuite(options(runDir, tasks, { env: { ...base, providerFor, approvalFor: () => buggyApproval } }));
  assert.deepEqual(first.results.map((r) => [taskKey(r), r.status, r.error?.code]), [["alpha/buggy", "errored", "internal"], ["alpha/outage", "errored", "provider"]]);

  const retry = options(runDir, tasks, { retryErrored: true, env: { ...base, providerFor, approvalFor: () => allowAll } });
  const second = await runSuite(retry);
  assert.deepEqual(second.results.map((r) => [taskKey(r), r.status, r.error?.code]), [["alpha/buggy", "errored", "internal"], ["alpha/outage", "passed", undefined]]);
  assert.deepEqual(retry.progress.flatMap((p) => (p.type === "task_end" ? [[taskKey(p.task), p.kept]] : [])).sort(), [["alpha/buggy", true], ["alpha/outage", false]],
    "the bug's result was kept as it was, the outage's task continued");
  assert.deepEqual(second.results[0], first.results[0]);
});

test("a selection with tasks the run directory's run lacks is refused naming them; add extends the run, restart starts it over", async (t) => {
  const root = await tempDir(t);
  const [one, two] = await writeSuite(root, { "arith/one.yaml": sleepingTask(0), "refactor/two.yaml": sleepingTask(0) });
  const runDir = join(root, "run");
  await runSuite(options(runDir, [one!]));
  const before = await readFile(join(runDir, "junit.xml"), "utf8");
  const refused = options(runDir, [two!]);
  await assert.rejects(runSuite(refused), (err: unknown) =>
    err instanceof SelectionOutsideRunError && err.code === "task_changed" &&
    err.message === `${runDir} holds a run without these selected tasks:\n  refactor/two (${two!.file})\n` +
      "add them to that run with --add, start the run over with --restart, or pass another --out");
  assert.deepEqual(refused.progress, [], "nothing started");
  assert.equal(await readFile(join(runDir, "junit.xml"), "utf8"), before, "the reports still hold the first run");
  assert.deepEqual((await readManifest(runDir))!.tasks.map(taskKey), ["arith/one"]);

  const added = await runSuite(options(runDir, [two!], { selection: "add" }));
  assert.deepEqual(added.results.map(taskKey), ["refactor/two"], "the exit code is the selection's");
  assert.deepEqual((await readManifest(runDir))!.tasks.map(taskKey), ["arith/one", "refactor/two"]);
  assert.match(await readFile(join(runDir, "junit.xml"), "utf8"), /<testsuites[^>]* tests="2" failures="0" errors="0" skipped="0"/);

  const first = await readManifest(runDir);
  await runSuite(options(runDir, [two!], { selection: "restart" }));
  const restarted = await readManifest(runDir);
  assert.deepEqual(restarted!.tasks.map(taskKey), ["refactor/two"]);
  assert.notEqual(restarted!.runId, first!.runId, "a new run");
  assert.equal(await exists(folderOf(runDir, one!).dir), false, "the old run's task folders are gone");
  assert.match(await readFile(join(runDir, "junit.xml"), "utf8"), /<testsuites[^>]* tests="1"/);
});

test("a subset of the run's tasks runs alone, and the reports keep every task of the manifest", async (t) => {
  const root = await tempDir(t);
  const tasks = await writeSuite(root, { "alpha/one.yaml": sleepingTask(0), "alpha/two.yaml": sleepingTask(0) });
  const runDir = join(root, "run");
  const stopped = new AbortController();
  stopped.abort();
  await runSuite(options(runDir, tasks, { signal: stopped.signal }));
  const subset = options(runDir, [tasks[0]!]);
  const outcome = await runSuite(subset);
  assert.deepEqual(subset.progress.flatMap((p) => (p.type === "task_start" ? [taskKey(p.task)] : [])), ["alpha/one"]);
  assert.deepEqual(outcome.unfinished, [{ suite: "alpha", id: "two", file: tasks[1]!.file, trial: { repeat: 1, variant: null }, state: "not_selected" }]);
  const junit = await readFile(join(runDir, "junit.xml"), "utf8");
  assert.match(junit, /<testsuites[^>]* tests="2" failures="0" errors="0" skipped="1"/);
  assert.match(junit, /name="two"[^>]*>\s*<skipped message="not run yet: not selected by the runs of this run directory so far"\/>\s*<system-out><!\[CDATA\[not run yet: not selected/);
  assert.deepEqual((await readManifest(runDir))!.tasks.map(taskKey), ["alpha/one", "alpha/two"], "the manifest keeps the whole selection");
  const rest = await runSuite(options(runDir, [tasks[1]!]));
  assert.deepEqual(rest.unfinished, []);
  assert.match(await readFile(join(runDir, "junit.xml"), "utf8"), /<testsuites[^>]* tests="2" failures="0" errors="0" skipped="0"/);
});

test("reports written on interrupt list the running task as interrupted and the unstarted one as not started; the next run continues them", async (t) => {
  const root = await tempDir(t);
  const tasks = await writeSuite(root, { "alpha/one.yaml": sleepingTask(30), "alpha/two.yaml": sleepingTask(0) });
  const runDir = join(root, "run");
  const controller = new AbortController();
  const opts = options(runDir, tasks, { concurrency: 1, signal: controller.signal });
  const onProgress = opts.onProgress;
  opts.onProgress = (p) => {
    onProgress(p);
    if (p.type === "task_event" && p.event.type === "tool_call") setTimeout(() => controller.abort(), 200);
  };
  const outcome = await runSuite(opts);
  assert.equal(outcome.interrupted, true);
  assert.deepEqual(outcome.unfinished.map((u) => [u.id, u.state]), [["one", "interrupted"], ["two", "not_started"]]);
  assert.equal(await exists(folderOf(runDir, tasks[0]!).path("result")), false, "interrupted is not a result");
  const junit = await readFile(join(runDir, "junit.xml"), "utf8");
  assert.match(junit, /<testsuites[^>]* tests="2" failures="0" errors="1" skipped="1"/);
  assert.match(junit, /name="one"[^>]*>\s*<error message="interrupted: [^"]*" type="interrupted"\/>/);
  assert.match(junit, /name="two"[^>]*>\s*<skipped message="not started: the run was interrupted"\/>\s*<system-out><!\[CDATA\[not started: the run was interrupted\n/);
  const stats = JSON.parse(await readFile(join(runDir, "stats.json"), "utf8"));
  assert.deepEqual([stats.total.counts.interrupted, stats.total.counts.notStarted], [1, 1]);
  assert.match(await readFile(join(runDir, "summary.md"), "utf8"), /0 of 2 tasks passed[\s\S]*⏸️ 1 interrupted · ⏳ 1 not started/);

  // The next run continues them: the shell call that was cut is not run again (revive closes it).
  const resumed = await runSuite(options(runDir, tasks));
  assert.deepEqual(resumed.unfinished, []);
  assert.deepEqual(resumed.results.map((r) => [r.id, r.resumed]), [["one", 1], ["two", 0]]);
});

test("the summary is appended to summaryAppend once per run, at its end or interrupt, keeping the file's mode", async (t) => {
  const root = await tempDir(t);
  const tasks = await writeSuite(root, { "alpha/one.yaml": sleepingTask(0), "alpha/two.yaml": sleepingTask(0) });
  const runDir = join(root, "run");
  const summaryFile = join(root, "step-summary.md");
  await writeFile(summaryFile, "## Earlier step\n", { mode: 0o644 });
  await chmod(summaryFile, 0o644);
  await runSuite(options(runDir, tasks, { summaryAppend: summaryFile }));
  const once = await readFile(summaryFile, "utf8");
  assert.equal(once, `## Earlier step\n\n${await readFile(join(runDir, "summary.md"), "utf8")}`, "one summary for two finished tasks");
  const stopped = new AbortController();
  stopped.abort();
  await runSuite(options(runDir, tasks, { summaryAppend: summaryFile, signal: stopped.signal }));
  const twice = await readFile(summaryFile, "utf8");
  assert.equal(twice.match(/^### rhema run/gm)?.length, 2, "the interrupted run appended its summary too");
  assert.ok(twice.startsWith(once));
  assert.equal((await stat(summaryFile)).mode & 0o777, 0o644);
});

test("the wall time after a resume counts the runs, not the gap between them", async (t) => {
  const root = await tempDir(t);
  const tasks = await writeSuite(root, { "alpha/one.yaml": sleepingTask(0) });
  const runDir = join(root, "run");
  let current = Date.parse(AT);
  const clocked = (extra: Partial<SuiteRunOptions> = {}) => {
    const opts = options(runDir, tasks, extra);
    opts.env = { ...opts.env, now: () => new Date(current) };
    opts.onProgress = (p) => { if (p.type === "task_end") current += 1_000; };
    return opts;
  };
  await runSuite(clocked());
  current += 3_600_000;
  await runSuite(clocked());
  const stats = JSON.parse(await readFile(join(runDir, "stats.json"), "utf8"));
  assert.equal(stats.wallTimeMs, 2_000);
  assert.equal((await readManifest(runDir))!.activeMs, 2_000);
  assert.match(await readFile(join(runDir, "summary.md"), "utf8"), / — 2\.0s wall · /);
});
