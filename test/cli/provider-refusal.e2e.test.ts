/**
 * A provider that refuses the run stops it once, through the built CLI against the providers'
 * fake servers (issue 27): a dead key (401) or a spent quota (`insufficient_quota`) leaves the
 * provider's trials unfinished — none errored — and is said once (one stderr line naming the
 * provider and the fix, one summary block, JUnit skipped entries), exit 3; the same command with
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
