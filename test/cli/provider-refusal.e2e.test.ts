/**
 * A provider that refuses the run stops it once, through the built CLI against the providers'
 * fake servers (issue 27): a dead key (401) or a spent quota (`insufficient_quota`) leaves the
 * provider's trials unfinished — none errored — and is said once (one stderr line naming the
 * provider and the fix, one summary block — kept by `report merge` — JUnit skipped entries), exit 3; the same command with
 * a key that works continues them without --retry-errored, each trial's tool call and check made
 * once (counted in files outside the workspaces). Running trials checkpoint and continue; another
 * provider's trials finish; a transient 429/529 is still retried, not a refusal.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { cliEnv, runCli } from "../support/cli.js";
import { FakeAnthropicServer, type FakeAnthropicReply } from "../support/fake-anthropic-server.js";
import { FakeOpenAIServer, type FakeOpenAIReply } from "../support/fake-openai-server.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { parseStatsReport } from "../../src/runner/reports/stats-report.js";

const POLICY = "version: 1\ndefault: allow\nrules: []\n";
const ids = (n: number) => Array.from({ length: n }, (_, i) => `t${String(i + 1).padStart(2, "0")}`);

/**
 * A task whose shell tool call appends its id to ran.txt in its workspace, and whose check copies
 * that file to `tools.txt` and appends the id to `checks.txt`, both outside the workspaces: a
 * tool call or a check made twice shows as a line twice.
 */
const task = (id: string, root: string, model = "{ provider: anthropic, name: claude-test }") => `prompt: Record ${id}.
policy: ../policy.yaml
model: ${model}
checks:
  - { name: counted, run: "cat ran.txt >> ${join(root, "tools.txt")} && echo ${id} >> ${join(root, "checks.txt")}" }
`;

const toolCall = (id: string): FakeAnthropicReply[] => [
  { kind: "stream", blocks: [{ type: "tool_use", id: `toolu_${id}`, name: "shell", input: { command: `echo ${id} >> ran.txt` } }] },
  { kind: "stream", blocks: [{ type: "text", text: `Recorded ${id}.` }] },
];
const DEAD_KEY: FakeAnthropicReply = { kind: "http_error", status: 401, type: "authentication_error", message: "invalid x-api-key" };

const lines = async (file: string) => (await readFile(file, "utf8").catch(() => "")).split("\n").filter((l) => l !== "");
const count = (text: string, part: string) => text.split(part).length - 1;
const resultFiles = async (out: string) => (await readdir(join(out, "tasks"), { recursive: true })).filter((f) => f.endsWith("result.json"));

test("a 50-task suite whose key is refused from the 3rd request: one message, the rest not started, exit 3; a valid key resumes it, each trial's side effects once", async (t) => {
  const root = await tempDir(t);
  const tasks = ids(50);
  await writeFiles(root, { "policy.yaml": POLICY, ...Object.fromEntries(tasks.map((id) => [`s/${id}.yaml`, task(id, root)])) });
  const dead = await FakeAnthropicServer.start();
  t.after(() => dead.close());
  dead.reply(...toolCall("t01"), ...tasks.map(() => DEAD_KEY));
  const args = ["run", "s", "--out", "run", "--sandbox", "off", "--concurrency", "1", "--junit", "junit.xml"];
  const first = await runCli(args, { cwd: root, env: cliEnv({ ANTHROPIC_API_KEY: "sk-ant-revoked", ANTHROPIC_BASE_URL: dead.baseUrl }) });

  assert.equal(first.code, 3, first.stderr);
  assert.equal(dead.requests.length, 3, "no request after the refusal");
  const said = "rhema: anthropic refused the key (401 authentication_error: invalid x-api-key): set a valid ANTHROPIC_API_KEY and run the same command to resume\n";
  assert.ok(first.stderr.endsWith(said), first.stderr);
  assert.equal(count(first.stderr + first.stdout, "refused the key ("), 1, `said once:\n${first.stderr}\n${first.stdout}`);
  assert.doesNotMatch(first.stderr, /errored/);
  const out = join(root, "run");
  assert.deepEqual(await resultFiles(out), ["s/t01/default/1/result.json"], "no trial recorded errored (or at all) but the one that finished");

  const junit = await readFile(join(root, "junit.xml"), "utf8");
  assert.equal(count(junit, '<skipped message="not started: anthropic refused the key"'), 48);
  assert.equal(count(junit, '<skipped message="not finished: anthropic refused the key while it ran; the same command continues it from its checkpoint"'), 1);
  assert.equal(count(junit, "<error"), 0);
  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.equal(count(summary, "The run could not continue"), 1);
  assert.equal(count(summary, "anthropic refused the key"), 1);
  assert.match(summary, /49 trials of anthropic left unfinished \(1 checkpointed while running, 48 not started\); none is recorded errored/);
  const stats = parseStatsReport(await readFile(join(out, "stats.json"), "utf8"));
  assert.equal(stats.unfinished.length, 49);
  assert.ok(stats.unfinished.every((u) => u.refusedBy?.provider === "anthropic" && u.refusedBy.reason === "auth"));
  assert.deepEqual([stats.total.counts.passed, stats.total.counts.errored], [1, 0]);
  assert.deepEqual(stats.refusals, [{ provider: "anthropic", reason: "auth", status: 401, kind: "authentication_error", detail: "invalid x-api-key" }]);
  // Merged reports of the stopped run say the refusal as the run's own did.
  const merge = await runCli(["report", "merge", "run", "--out", "merged"], { cwd: root, env: cliEnv() });
  assert.equal(merge.code, 0, merge.stderr);
  const merged = await readFile(join(root, "merged", "summary.md"), "utf8");
  assert.equal(count(merged, "The run could not continue"), 1);
  assert.match(merged, /\*\*anthropic refused the key \(401 authentication_error: invalid x-api-key\): set a valid ANTHROPIC_API_KEY/);
  assert.match(merged, /49 trials of anthropic left unfinished/);
  assert.deepEqual(parseStatsReport(await readFile(join(root, "merged", "stats.json"), "utf8")).refusals, stats.refusals);

  // The same command, a key that works: the 49 continue; none is run twice.
  const alive = await FakeAnthropicServer.start();
  t.after(() => alive.close());
  alive.reply(...tasks.slice(1).flatMap((id) => toolCall(id)));
  const second = await runCli(args, { cwd: root, env: cliEnv({ ANTHROPIC_API_KEY: "sk-ant-valid", ANTHROPIC_BASE_URL: alive.baseUrl }) });
  assert.equal(second.code, 0, second.stderr);
  assert.doesNotMatch(second.stderr, /refused/);
  assert.deepEqual(alive.violations, []);
  assert.equal(alive.requests.length, 98);
  assert.deepEqual(await lines(join(root, "tools.txt")), tasks);
  assert.deepEqual(await lines(join(root, "checks.txt")), tasks);
  const final = parseStatsReport(await readFile(join(out, "stats.json"), "utf8"));
  assert.deepEqual([final.total.counts.passed, final.unfinished.length], [50, 0]);
});

const say = (text: string): FakeAnthropicReply => ({ kind: "stream", blocks: [{ type: "text", text }] });

test("with --concurrency 3, the trials already running when the key is refused checkpoint and stop, and continue with a valid key", async (t) => {
  const root = await tempDir(t);
  const tasks = ids(6);
  await writeFiles(root, { "policy.yaml": POLICY, ...Object.fromEntries(tasks.map((id) => [`s/${id}.yaml`, task(id, root).replace("cat ran.txt >> ", "true >> ")])) });
  const dead = await FakeAnthropicServer.start();
  t.after(() => dead.close());
  // The first two requests to arrive are held open mid-stream; the third is refused.
  const held: FakeAnthropicReply = { kind: "stream", blocks: [{ type: "text", text: "never finished" }], hangAfterFrames: 1 };
  dead.reply(held, held, ...tasks.map(() => DEAD_KEY));
  const args = ["run", "s", "--out", "run", "--sandbox", "off", "--concurrency", "3"];
  const first = await runCli(args, { cwd: root, env: cliEnv({ ANTHROPIC_API_KEY: "sk-ant-revoked", ANTHROPIC_BASE_URL: dead.baseUrl }) });
  assert.equal(first.code, 3, first.stderr);
  assert.equal(dead.requests.length, 3);
  assert.equal(count(first.stderr, "refused the key ("), 1, first.stderr);
  assert.equal(count(first.stderr, "interrupted; checkpointed"), 3, first.stderr);
  const out = join(root, "run");
  assert.deepEqual(await resultFiles(out), []);
  const stats = parseStatsReport(await readFile(join(out, "stats.json"), "utf8"));
  assert.deepEqual(stats.unfinished.map((u) => [u.id, u.state, u.refusedBy?.reason]), [
    ["t01", "interrupted", "auth"], ["t02", "interrupted", "auth"], ["t03", "interrupted", "auth"],
    ["t04", "not_started", "auth"], ["t05", "not_started", "auth"], ["t06", "not_started", "auth"],
  ]);

  const alive = await FakeAnthropicServer.start();
  t.after(() => alive.close());
  alive.reply(...tasks.map((id) => say(`Recorded ${id}.`)));
  const second = await runCli(args, { cwd: root, env: cliEnv({ ANTHROPIC_API_KEY: "sk-ant-valid", ANTHROPIC_BASE_URL: alive.baseUrl }) });
  assert.equal(second.code, 0, second.stderr);
  assert.equal(alive.requests.length, 6);
  assert.deepEqual((await lines(join(root, "checks.txt"))).sort(), tasks);
});

test("a spent quota on the OpenAI wire (429 insufficient_quota) is not retried: said once, naming the quota, exit 3", async (t) => {
  const root = await tempDir(t);
  const tasks = ids(3);
  const model = "{ provider: openai, name: gpt-test }";
  await writeFiles(root, { "policy.yaml": POLICY, ...Object.fromEntries(tasks.map((id) => [`s/${id}.yaml`, task(id, root, model)])) });
  const server = await FakeOpenAIServer.start();
  t.after(() => server.close());
  const quota: FakeOpenAIReply = {
    kind: "http_error", status: 429, type: "insufficient_quota", code: "insufficient_quota",
    message: "You exceeded your current quota, please check your plan and billing details.",
  };
  server.reply(quota, quota, quota, quota);
  const run = await runCli(["run", "s", "--out", "run", "--sandbox", "off", "--concurrency", "1", "--junit", "junit.xml"], { cwd: root, env: cliEnv({ OPENAI_API_KEY: "sk-spent", OPENAI_BASE_URL: server.baseUrl }) });
  assert.equal(run.code, 3, run.stderr);
  assert.equal(server.requests.length, 1, "not retried");
  assert.doesNotMatch(run.stderr, /retrying/);
  assert.ok(run.stderr.endsWith("rhema: openai refused the run: its quota or credit is spent (429 insufficient_quota: You exceeded your current quota, please check your plan and billing details.): " +
    "add credit or raise the quota of the account OPENAI_API_KEY belongs to (or set another key) and run the same command to resume\n"), run.stderr);
  const junit = await readFile(join(root, "junit.xml"), "utf8");
  assert.equal(count(junit, "<skipped message=\"not started: openai refused the run (quota or credit spent)\""), 2, junit);
});

test("a transient 529 and a 429 with retry-after are still retried, and the run passes", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": POLICY, "s/t01.yaml": task("t01", root).replace("cat ran.txt >> ", "true >> ") });
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  server.reply(
    { kind: "http_error", status: 529, type: "overloaded_error", message: "Overloaded", headers: { "retry-after": "0" } },
    { kind: "http_error", status: 429, type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit", headers: { "retry-after": "1" } },
    say("Recorded t01."),
  );
  const run = await runCli(["run", "s", "--out", "run", "--sandbox", "off"], { cwd: root, env: cliEnv({ ANTHROPIC_API_KEY: "sk-ant-valid", ANTHROPIC_BASE_URL: server.baseUrl }) });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(server.requests.length, 3);
  assert.match(run.stderr, /\[s\/t01\] retrying after 529 \(attempt 2\/4, 0\.0 s\)\n/);
  assert.match(run.stderr, /\[s\/t01\] retrying after 429 \(attempt 3\/4, 1\.0 s\)\n/);
  assert.doesNotMatch(run.stderr, /refused/);
});

test("a matrix of two providers where one refuses the key: the other's trials finish, the refused one's wait", async (t) => {
  const root = await tempDir(t);
  const tasks = ids(3);
  const cellTask = (id: string) => task(id, root).replace(/model: .*\n/, "").replace("cat ran.txt >> ", "true >> ");
  await writeFiles(root, {
    "policy.yaml": POLICY, ...Object.fromEntries(tasks.map((id) => [`s/${id}.yaml`, cellTask(id)])),
    "matrix.yaml": "matrix:\n  model:\n    - { id: claude, provider: anthropic, name: claude-test }\n    - { id: gpt, provider: openai, name: gpt-test }\n",
  });
  const anthropic = await FakeAnthropicServer.start();
  t.after(() => anthropic.close());
  anthropic.reply(...tasks.map(() => DEAD_KEY));
  const openai = await FakeOpenAIServer.start();
  t.after(() => openai.close());
  openai.reply(...tasks.map((id): FakeOpenAIReply => ({ kind: "stream", text: `Recorded ${id}.` })));
  const run = await runCli(["run", "s", "--out", "run", "--sandbox", "off", "--matrix", "matrix.yaml", "--concurrency", "1"], {
    cwd: root, env: cliEnv({ ANTHROPIC_API_KEY: "sk-ant-revoked", ANTHROPIC_BASE_URL: anthropic.baseUrl, OPENAI_API_KEY: "sk-ok", OPENAI_BASE_URL: openai.baseUrl }),
  });
  assert.equal(run.code, 3, run.stderr);
  assert.equal(anthropic.requests.length, 1);
  assert.equal(openai.requests.length, 3);
  assert.equal(count(run.stderr, "refused the key ("), 1, run.stderr);
  const stats = parseStatsReport(await readFile(join(root, "run", "stats.json"), "utf8"));
  assert.deepEqual(stats.tasks.map((r) => [r.id, r.trial?.variant, r.status]), tasks.map((id) => [id, "model=gpt", "passed"]));
  assert.deepEqual(stats.unfinished.map((u) => [u.id, u.trial?.variant, u.refusedBy?.provider]), tasks.map((id) => [id, "model=claude", "anthropic"]));
});
