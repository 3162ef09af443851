/**
 * `rhema run` on a run directory that already holds a run, and the reports a CI user reads:
 * another task set is refused (unless --add or --restart), a subset resumes and the reports keep
 * every task, SIGINT during a check reports every task, `--summary` appends once, JUnit `file`
 * is relative to the repository.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { validateXML } from "xmllint-wasm";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli, startCli } from "../support/cli.js";
import { junitXsd, repoRoot } from "../support/paths.js";
import { snapshotTree } from "../support/run-dir.js";
import { OPEN_POLICY, taggingTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { exists, waitFor } from "../support/wait.js";

const testcases = (xml: string) => [...xml.matchAll(/<testcase classname="([^"]+)" name="([^"]+)"/g)].map((m) => `${m[1]}/${m[2]}`);

async function assertValidJUnit(xml: string): Promise<void> {
  const xsd = await readFile(junitXsd("junit-10-ext.xsd"), "utf8");
  const result = await validateXML({ xml: [{ fileName: "junit.xml", contents: xml }], schema: [{ fileName: "junit-10-ext.xsd", contents: xsd }] });
  assert.ok(result.valid, result.rawOutput);
}

test("a run directory refuses another task set (exit 2 naming the tasks) unless --add or --restart", async (t) => {
  const out = join(await tempDir(t), "run");
  assert.equal((await runCli(["run", "tasks/arithmetic", "--out", out], { cwd: repoRoot })).code, 1);
  const before = await snapshotTree(out);
  const refused = await runCli(["run", "tasks/refactor", "--out", out], { cwd: repoRoot });
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /holds a run without these selected tasks:\n {2}refactor\/rename-calc \(.*tasks\/refactor\/rename-calc\.yaml\)\nadd them to that run with --add, start the run over with --restart/);
  assert.deepEqual(await snapshotTree(out), before, "nothing in the run directory changed");

  const added = await runCli(["run", "tasks/refactor", "--out", out, "--add"], { cwd: repoRoot });
  assert.equal(added.code, 0, "the selection (refactor) passed");
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  assert.deepEqual(testcases(junit), ["arithmetic/add-multiply", "arithmetic/fix-add", "arithmetic/flaky-fix", "arithmetic/wrong-fix", "refactor/rename-calc"]);
  await assertValidJUnit(junit);

  const restarted = await runCli(["run", "tasks/refactor", "--out", out, "--restart"], { cwd: repoRoot });
  assert.equal(restarted.code, 0, restarted.stderr);
  assert.deepEqual(testcases(await readFile(join(out, "junit.xml"), "utf8")), ["refactor/rename-calc"]);
  assert.deepEqual((await readRunResults(out)).map((r) => r.id), ["rename-calc"]);

  const both = await runCli(["run", "tasks/refactor", "--out", out, "--add", "--restart"], { cwd: repoRoot });
  assert.equal(both.code, 2);
  assert.match(both.stderr, /at most one of --add and --restart/);
});

test("re-running one task with --filter runs only it, and the reports keep every task of the run", async (t) => {
  const out = join(await tempDir(t), "run");
  await runCli(["run", "tasks/", "--out", out], { cwd: repoRoot });
  const again = await runCli(["run", "tasks/", "--out", out, "--filter", "arithmetic/wrong-fix"], { cwd: repoRoot });
  assert.equal(again.code, 1, "the selected task still fails");
  assert.match(again.stdout, /Tasks: 1 finished — passed 0, failed 1/);
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  assert.equal(testcases(junit).length, 6);
  assert.match(junit, /<testsuites[^>]* tests="6" failures="2" errors="0" skipped="0"/);
});

test("SIGINT during a check: exit 130, and the reports list every task (interrupted, not started); the same command continues", async (t) => {
  const root = await tempDir(t);
  const slowCheck = `prompt: Say done.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - say: done
checks:
  - { name: slow check, run: "test -f second-time || (touch second-time checking; sleep 30)" }
`;
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/a-slow.yaml": slowCheck, "suite/b-later.yaml": taggingTask("later", 1) });
  const out = join(root, "run");
  const run = startCli(["run", "suite", "--out", out, "--concurrency", "1"], { cwd: root });
  await waitFor(() => exists(join(out, "tasks/suite/a-slow/default/1/workspace/checking")));
  run.child.kill("SIGINT");
  const stopped = await run.done;
  assert.equal(stopped.code, 130, stopped.stderr);
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  assert.match(junit, /<testsuites[^>]* tests="2" failures="0" errors="1" skipped="1"/);
  assert.match(junit, /name="a-slow"[^>]*>\s*<error message="interrupted: [^"]*" type="interrupted"\/>/);
  assert.match(junit, /name="b-later"[^>]*>\s*<skipped message="not started: the run was interrupted"\/>\s*<system-out><!\[CDATA\[not started: the run was interrupted/);
  await assertValidJUnit(junit);
  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.doesNotMatch(summary, /No tasks ran/);
  assert.match(summary, /\| ⏸️ \| `suite\/a-slow` \|[\s\S]*\| ⏳ \| `suite\/b-later` \|/);
  assert.deepEqual(await readRunResults(out), [], "interrupted is not a result");
  const resumed = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(await readFile(join(out, "junit.xml"), "utf8"), /<testsuites[^>]* tests="2" failures="0" errors="0" skipped="0"/);
});

test("--summary appends the final summary once per run and keeps the file's mode", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/a.yaml": taggingTask("a", 1), "suite/b.yaml": taggingTask("b", 1) });
  const stepSummary = join(root, "step_summary");
  await writeFile(stepSummary, "## Build\n\nok\n");
  await chmod(stepSummary, 0o664);
  for (let run = 0; run < 2; run += 1) {
    const result = await runCli(["run", "suite", "--out", join(root, "run"), "--summary", stepSummary], { cwd: root });
    assert.equal(result.code, 0, result.stderr);
  }
  const text = await readFile(stepSummary, "utf8");
  assert.ok(text.startsWith("## Build\n\nok\n\n### rhema run"), text);
  assert.equal(text.match(/^### rhema run/gm)?.length, 2, "one summary per invocation, none per task");
  assert.equal((await stat(stepSummary)).mode & 0o777, 0o664);
  assert.equal((await readFile(join(root, "run/summary.md"), "utf8")).match(/^### rhema run/gm)?.length, 1, "the run directory's summary is rewritten");
});

test("JUnit names each task file relative to the repository root", async (t) => {
  const out = join(await tempDir(t), "run");
  await runCli(["run", "arithmetic", "--out", out], { cwd: join(repoRoot, "tasks") });
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  assert.match(junit, /<testcase classname="arithmetic" name="fix-add" time="[\d.]+" file="tasks\/arithmetic\/fix-add.yaml">/);
  assert.doesNotMatch(junit, new RegExp(`file="${repoRoot}`));
});

test("after a SIGKILL and a resume, step numbers continue in the events and durationMs keeps the killed run's time", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/slow.yaml": taggingTask("slow", 8, { sleep: 0.25 }) });
  const out = join(root, "run");
  const run = startCli(["run", "suite", "--out", out], { cwd: root });
  const tags = join(out, "tasks/suite/slow/default/1/workspace/tags.txt");
  await waitFor(async () => (await readFile(tags, "utf8").catch(() => "")).includes("slow-4"));
  const killedAt = Date.now();
  run.child.kill("SIGKILL");
  await run.done;
  const startedAt = Date.parse(JSON.parse(await readFile(join(out, "tasks/suite/slow/default/1/task-state.json"), "utf8")).startedAt);
  const state = JSON.parse(await readFile(join(out, "tasks/suite/slow/default/1/task-state.json"), "utf8")) as { activeMs: number };
  // Four steps of ≥ 250 ms each had committed before the kill.
  assert.ok(state.activeMs >= 1_000 && state.activeMs <= killedAt - startedAt + 50, `activeMs ${state.activeMs} recorded before the kill`);
  const resumed = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(resumed.code, 0, resumed.stderr);
  const [result] = await readRunResults(out);
  assert.ok(result!.durationMs >= state.activeMs, `durationMs ${result!.durationMs} counts the killed run's ${state.activeMs} ms`);
  const events = (await readFile(join(out, "tasks/suite/slow/default/1/events.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l) as { type: string; step?: number; steps?: number });
  const requestSteps = events.filter((e) => e.type === "request").map((e) => e.step!);
  const resumedAt = requestSteps.findIndex((step, i) => i > 0 && step <= requestSteps[i - 1]!);
  assert.ok(resumedAt === -1 || requestSteps[resumedAt] === requestSteps[resumedAt - 1], `steps ${requestSteps.join(",")} continue (a re-sent request keeps its number)`);
  assert.equal(Math.max(...requestSteps), result!.steps, "the last step's number is the result's step count");
  assert.equal(events.filter((e) => e.type === "turn_end").at(-1)!.steps, result!.steps);
});
