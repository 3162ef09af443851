/**
 * `rhema run` end to end: the built CLI as a user runs it, on real suites, workspaces,
 * shells and run directories.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { hostname } from "node:os";
import { spawn } from "node:child_process";
import { validateXML } from "xmllint-wasm";
import { parseStatsReport } from "../../src/runner/reports/stats-report.js";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { currentPidScope } from "../../src/process/pid-scope.js";
import { processStartTime } from "../../src/runner/run-dir/lock-owner.js";
import { loadSession } from "../../src/store/session-file.js";
import { CheckpointStore } from "../../src/store/checkpoint-store.js";
import { cliEnv, runCli, startCli } from "../support/cli.js";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { junitXsd, repoRoot } from "../support/paths.js";
import { readJson, snapshotTree } from "../support/run-dir.js";
import { OPEN_POLICY, taggingTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";

const statusOf = async (out: string) => Object.fromEntries((await readRunResults(out)).map((r) => [`${r.suite}/${r.id}`, r.status]));

test("runs the example suite offline with the expected outcome per task and valid reports", async (t) => {
  const out = join(await tempDir(t), "run");
  const result = await runCli(["run", "tasks/", "--out", out, "--pass-at", "1,3"], { cwd: repoRoot });
  assert.equal(result.code, 1, result.stderr);
  const results = await readRunResults(out);
  assert.deepEqual(Object.fromEntries(results.filter((r) => r.id !== "flaky-fix").map((r) => [`${r.suite}/${r.id}`, r.status])), {
    "arithmetic/add-multiply": "passed",
    "arithmetic/fix-add": "passed",
    "arithmetic/wrong-fix": "failed",
    "refactor/rename-calc": "passed",
    "release/publish": "failed",
  });
  // The flaky task: seed 3 draws the passing alternative for trials 1, 2 and 5 (script-choice.ts).
  assert.deepEqual(results.filter((r) => r.id === "flaky-fix").map((r) => [r.trial?.repeat, r.status]),
    [[1, "passed"], [2, "passed"], [3, "failed"], [4, "failed"], [5, "passed"]]);
  assert.match(result.stdout, /Tasks: 6 finished — passed 4, failed 2, errored 0 \(10 trials, 1 flaky task\); 2 tool calls denied by policy/);
  const xsd = await readFile(junitXsd("junit-10-ext.xsd"), "utf8");
  const xml = await readFile(join(out, "junit.xml"), "utf8");
  const validation = await validateXML({ xml: [{ fileName: "junit.xml", contents: xml }], schema: [{ fileName: "junit-10-ext.xsd", contents: xsd }] });
  assert.ok(validation.valid, validation.rawOutput);
  assert.match(xml, /<failure[^>]*unit tests/);
  const stats = parseStatsReport(await readFile(join(out, "stats.json"), "utf8"));
  assert.ok(stats.total.stats!.requests >= 14, "the stats count the requests");
  assert.ok(stats.total.stats!.cacheHitRate > 0.3, `the simulator reports cache hits (${stats.total.stats!.cacheHitRate})`);
  const publish = (await readRunResults(out)).find((r) => r.id === "publish")!;
  assert.equal(publish.policyDenials.count, 2);
  assert.match(publish.policyDenials.examples[1]!.reason, /no pushes from CI/);
  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.match(summary, /4 of 6 tasks passed \(6 of 10 trials passed\)/);
  // n = 5, c = 3, by hand: rate 0.6; Wilson 95 %: (0.6 + z²/10 ∓ z·√(0.24/5 + z²/100)) / (1 + z²/5) = 0.2307…, 0.8824…;
  // pass@1 = 0.6, pass@3 = 1 − C(2,3)/C(5,3) = 1, pass^3 = C(3,3)/C(5,3) = 0.1.
  const flaky = stats.taskTrials.find((t) => t.id === "flaky-fix")!;
  assert.equal(flaky.passRate!.rate, 0.6);
  assert.ok(Math.abs(flaky.passRate!.lower - 0.2307) < 1e-4 && Math.abs(flaky.passRate!.upper - 0.8824) < 1e-4, JSON.stringify(flaky.passRate));
  assert.deepEqual(flaky.passAt.map((a) => [a.k, a.value]), [[1, 0.6], [3, 1]]);
  assert.deepEqual(flaky.passPower.map((a) => [a.k, a.value && Number(a.value.toFixed(10))]), [[1, 0.6], [3, 0.1]]);
  assert.equal(flaky.flaky, true);
  assert.match(summary, /\| ✅ \| `arithmetic\/flaky-fix` \| 3\/5 \| 60\.0% \(23\.1%–88\.2%\) \|/);
  // The task passed its gate (rate 0.5) with two failed trials: one testcase, a flakyFailure per failed trial.
  const testcase = /<testcase classname="arithmetic" name="flaky-fix"[\s\S]*?<\/testcase>/.exec(xml)?.[0] ?? "";
  assert.equal((testcase.match(/<flakyFailure /g) ?? []).length, 2, testcase);
  assert.match(testcase, /<flakyFailure message="trial 3\/5: [^"]*" type="check">/);
  assert.doesNotMatch(testcase, /<failure /);
  for (const [path, hashAndMode] of await snapshotTree(out)) {
    // The changes snapshot's git objects are read-only (0400); like every other file, the owner's alone.
    if (/(^|\/)(changes\.git|changes-objects)\//.test(path)) assert.ok(/ (256|384)$/.test(hashAndMode), `${path} is 0400 or 0600`);
    // A workspace's files, and a layered one's files in its layer (layer/upper), keep the fixture's modes.
    else if (!path.includes("/workspace/") && !/\/layer\/(upper|work)\//.test(path)) assert.ok(hashAndMode.endsWith(" 384"), `${path} is 0600`);
  }
  for (const entry of await readdir(out, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isDirectory() && !path.includes("/workspace") && !/\/layer\/(upper|work)\//.test(path)) assert.equal((await stat(path)).mode & 0o777, 0o700, `${path} is 0700`);
  }
});

test("a second run on the same directory keeps the finished tasks", async (t) => {
  const out = join(await tempDir(t), "run");
  await runCli(["run", "tasks/arithmetic", "--out", out], { cwd: repoRoot });
  const before = await readRunResults(out);
  const again = await runCli(["run", "tasks/arithmetic", "--out", out], { cwd: repoRoot });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /kept from an earlier run/);
  assert.deepEqual(await readRunResults(out), before);
});

test("a task file changed since its run started is exit 2, unless --restart-changed", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/a.yaml": taggingTask("a", 1), "suite/b.yaml": taggingTask("b", 1) });
  const out = join(root, "run");
  assert.equal((await runCli(["run", "suite", "--out", out], { cwd: root })).code, 0);
  await writeFile(join(root, "suite/a.yaml"), taggingTask("a", 2));
  const before = await snapshotTree(out);
  const refused = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /changed since their run started:\n {2}suite\/a \(.*suite\/a\.yaml\)/);
  assert.deepEqual(await snapshotTree(out), before, "nothing in the run directory changed");
  const restarted = await runCli(["run", "suite", "--out", out, "--restart-changed"], { cwd: root });
  assert.equal(restarted.code, 0, restarted.stderr);
  const tags = await readFile(join(out, "tasks/suite/a/default/1/workspace/tags.txt"), "utf8");
  assert.equal(tags, "a-0\na-1\n");
});

test("a live lock keeps a second runner off the directory; a stale one is taken over", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/a.yaml": taggingTask("a", 1) });
  const out = join(root, "run");
  const holder = spawn("sleep", ["30"]);
  t.after(() => holder.kill());
  // The lock as a runner of this pid namespace writes it: its pid is judged here.
  const owner = { host: hostname(), pid: holder.pid, processStartTime: await processStartTime(holder.pid!), startedAt: new Date().toISOString(), pidScope: await currentPidScope() };
  await writeFiles(out, { "rhema.lock": JSON.stringify(owner) });
  const locked = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(locked.code, 2);
  assert.match(locked.stderr, new RegExp(`in use by another rhema run \\(pid ${holder.pid}\\)`));
  holder.kill("SIGKILL");
  await new Promise((r) => holder.once("exit", r));
  const taken = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(taken.code, 0, taken.stderr);
  assert.ok(!(await readdir(out)).includes("rhema.lock"), "the lock is released at the end");
});

test("SIGTERM checkpoints, writes the reports, exits 130; the same command continues", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/slow.yaml": taggingTask("slow", 8, { sleep: 0.3 }),
    "suite/quick.yaml": taggingTask("quick", 1),
  });
  const out = join(root, "run");
  const run = startCli(["run", "suite", "--out", out, "--concurrency", "2"], { cwd: root });
  await waitFor(async () => (await readFile(join(out, "tasks/suite/slow/default/1/workspace/tags.txt"), "utf8").catch(() => "")).includes("slow-2"));
  run.child.kill("SIGTERM");
  const stopped = await run.done;
  assert.equal(stopped.code, 130, stopped.stderr);
  assert.match(stopped.stdout, /Interrupted: run the same command again to continue/);
  assert.deepEqual(Object.keys(await statusOf(out)), ["suite/quick"], "the reports cover what finished");
  await loadSession(join(out, "tasks/suite/slow/default/1/session.json"));
  const resumed = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(resumed.code, 0, resumed.stderr);
  const tags = (await readFile(join(out, "tasks/suite/slow/default/1/workspace/tags.txt"), "utf8")).trim().split("\n");
  assert.equal(new Set(tags).size, tags.length, "no call ran twice");
  assert.ok(tags.includes("slow-7"));
  const slow = (await readRunResults(out)).find((r) => r.id === "slow")!;
  assert.equal(slow.resumed, 1);
});

test("a corrupt checkpoint is exit 2 naming the file, and records no result for its task", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/slow.yaml": taggingTask("slow", 6, { sleep: 0.3 }), "suite/quick.yaml": taggingTask("quick", 1) });
  const out = join(root, "run");
  const run = startCli(["run", "suite", "--out", out, "--concurrency", "2"], { cwd: root });
  await waitFor(async () => (await readFile(join(out, "tasks/suite/slow/default/1/workspace/tags.txt"), "utf8").catch(() => "")).includes("slow-1"));
  run.child.kill("SIGTERM");
  assert.equal((await run.done).code, 130);
  const session = join(out, "tasks/suite/slow/default/1/session.json");
  const text = await readFile(session, "utf8");
  await writeFile(session, text.slice(0, text.length / 2));
  const again = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(again.code, 2, again.stderr);
  assert.match(again.stderr, new RegExp(`${session.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: not JSON \\(truncated or corrupt\\)`));
  assert.doesNotMatch(again.stderr, /\n\s+at /, "no stack trace");
  assert.deepEqual(Object.keys(await statusOf(out)), ["suite/quick"], "no result was recorded for the corrupt task");
  assert.ok(!(await readdir(out)).includes("rhema.lock"), "the lock is released");
});

test("a task's timeout counts the time an interrupted run already spent on it", async (t) => {
  const root = await tempDir(t);
  // A timeout long enough that a loaded machine still reaches the 6th step (≥ 2.4 s spent) first.
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/slow.yaml": taggingTask("slow", 40, { sleep: 0.4, extra: "limits: { timeout: 10s, maxSteps: 60 }\n" }) });
  const out = join(root, "run");
  const run = startCli(["run", "suite", "--out", out], { cwd: root });
  await waitFor(async () => (await readFile(join(out, "tasks/suite/slow/default/1/workspace/tags.txt"), "utf8").catch(() => "")).includes("slow-6"));
  run.child.kill("SIGTERM");
  assert.equal((await run.done).code, 130);
  const resumed = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(resumed.code, 1, resumed.stderr);
  const [result] = await readRunResults(out);
  assert.equal(result!.error?.code, "timeout");
  // Spent ≥ 2.4 s before the interrupt: without carrying it over, the total would pass 12.4 s.
  assert.ok(result!.durationMs >= 10_000 && result!.durationMs < 11_900, `durationMs ${result!.durationMs}`);
});

test("a timeout and a step cap error their tasks with their codes", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/timeout.yaml": taggingTask("timeout", 5, { sleep: 1, extra: "limits: { timeout: 1500ms }\n" }),
    "suite/capped.yaml": taggingTask("capped", 5, { extra: "limits: { maxSteps: 3 }\n" }),
  });
  const out = join(root, "run");
  const result = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(result.code, 1);
  const results = await readRunResults(out);
  assert.deepEqual(results.map((r) => [r.id, r.status, r.error?.code]), [["capped", "errored", "step_cap"], ["timeout", "errored", "timeout"]]);
  for (const r of results) assert.ok(r.stats && r.stats.requests >= 1 && r.steps >= 1, `${r.id}: an errored task still reports what it used`);
  assert.match(await readFile(join(out, "junit.xml"), "utf8"), /<error [^>]*type="timeout"/);
});

test("--json writes the event stream as JSON lines on stdout", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/a.yaml": taggingTask("a", 1) });
  const result = await runCli(["run", "suite", "--out", join(root, "run"), "--json"], { cwd: root });
  const lines = result.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; task?: string; event?: { type: string } });
  assert.equal(lines[0]!.type, "run_start");
  assert.ok(lines.some((l) => l.type === "task_event" && l.task === "suite/a" && l.event!.type === "tool_call"));
  assert.equal(lines.at(-1)!.type, "run_end");
});

test("no secret from the environment reaches a session, event log or report", async (t) => {
  const root = await tempDir(t);
  const secret = "sk-test-4f9d2c7a1b8e6f30";
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "fixture/leak.txt": `token=${secret}\n`,
    "suite/leak.yaml": `prompt: Show me the secrets.
workspace: { from: ../fixture }
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - call: shell
      input: { command: "echo key=$RHEMA_E2E_API_KEY" }
    - call: read_file
      input: { path: leak.txt }
    - say: "done"
checks:
  - { name: print, run: "cat leak.txt; echo $RHEMA_E2E_API_KEY" }
`,
  });
  const out = join(root, "run");
  const result = await runCli(["run", "suite", "--out", out], { cwd: root, env: cliEnv({ RHEMA_E2E_API_KEY: secret }) });
  assert.equal(result.code, 0, result.stderr);
  for (const [path] of await snapshotTree(out)) {
    if (path.includes("workspace/")) continue;
    const text = await readFile(join(out, path), "utf8");
    assert.ok(!text.includes(secret), `${path} holds the secret`);
  }
  const session = (await new CheckpointStore(join(out, "tasks/suite/leak/default/1")).load())!;
  const [shellResult, readResult] = session.messages.flatMap((m) => m.content).filter((b) => b.type === "tool_result").map((b) => JSON.stringify(b));
  assert.match(shellResult!, /key=\\n/, "the shell did not see the variable");
  assert.match(readResult!, /token=\[redacted:RHEMA_E2E_API_KEY\]/, "what the file held reached the model redacted");
});

test("--junit, --stats and --summary write copies of the reports", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/a.yaml": taggingTask("a", 1) });
  const out = join(root, "run");
  await runCli(["run", "suite", "--out", out, "--junit", "ci/junit.xml", "--stats", "ci/stats.json", "--summary", "ci/summary.md"], { cwd: root });
  for (const name of ["junit.xml", "stats.json", "summary.md"]) {
    assert.equal(await readFile(join(root, "ci", name), "utf8"), await readFile(join(out, name), "utf8"));
  }
  const manifest = await readJson<{ tasks: unknown[] }>(join(out, "manifest.json"));
  assert.equal(manifest.tasks.length, 1);
});

test("--retry-errored continues a task that a provider failure errored, re-sending the failed request", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/real.yaml": `prompt: Say hello.
policy: ../policy.yaml
model: { provider: anthropic, name: claude-test }
checks:
  - { name: always, run: "true" }
`,
  });
  const out = join(root, "run");
  const env = cliEnv({ ANTHROPIC_API_KEY: "sk-test-key", ANTHROPIC_BASE_URL: server.baseUrl });
  server.reply({ kind: "http_error", status: 400, type: "invalid_request_error", message: "prompt is too long" });
  const first = await runCli(["run", "suite", "--out", out], { cwd: root, env });
  assert.equal(first.code, 1, first.stderr);
  assert.deepEqual((await readRunResults(out)).map((r) => [r.status, r.error?.code]), [["errored", "provider"]]);

  const kept = await runCli(["run", "suite", "--out", out], { cwd: root, env });
  assert.equal(kept.code, 1);
  assert.equal(server.requests.length, 1, "without the flag an errored task is kept");

  server.reply({ kind: "stream", blocks: [{ type: "text", text: "Hello." }] });
  const retried = await runCli(["run", "suite", "--out", out, "--retry-errored"], { cwd: root, env });
  assert.equal(retried.code, 0, retried.stderr);
  const [result] = await readRunResults(out);
  assert.deepEqual([result!.status, result!.finalAnswer, result!.provider, result!.resumed], ["passed", "Hello.", "anthropic:claude-test", 1]);
  assert.deepEqual(server.bodies[1], server.bodies[0], "the retry re-sent the request that failed");
});
