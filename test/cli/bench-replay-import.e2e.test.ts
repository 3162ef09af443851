import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { cliEnv, runCli } from "../support/cli.js";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { repoRoot } from "../support/paths.js";
import { tempDir } from "../support/temp-dir.js";
import { HAND_COMPUTED, threeRequestSession } from "../support/recorded-session.js";

const fixtures = join(repoRoot, "test", "fixtures", "sessions");
const real = join(repoRoot, "bench", "corpus", "real");

interface Json {
  inputs: Array<{ input: string; format: string; sessions: Array<{ name: string; requests: number; billedRequests: number; prefixTokens: number; skipped: Record<string, number> }> }>;
  total: Array<{ strategy: string; budget: number | null; requests: number; simulatorError?: Record<string, unknown> | null; sessionErrors?: Array<Record<string, unknown>> }>;
}

test("each file's format is detected from its content and named; a Claude Code main session brings its subagents, both layouts", async (t) => {
  const dir = await tempDir(t);
  const r = await runCli(["bench", "replay", join(fixtures, "claude-code", "main.jsonl"), join(fixtures, "codex"), join(fixtures, "mini-swe-agent"),
    "--strategy", "sections", "--budget", "8000", "--json"], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as Json;
  assert.deepEqual(out.inputs.map((i) => [i.input, i.format, i.sessions.map((s) => s.name)]), [
    ["main.jsonl", "claude-code", ["main.jsonl", "main.jsonl › main/subagents/agent-a1.jsonl", "main.jsonl › agent-b2.jsonl"]],
    ["rollout-2026-01-05T11-00-00-019a0000-0000-7000-8000-000000000001.jsonl", "codex", ["rollout-2026-01-05T11-00-00-019a0000-0000-7000-8000-000000000001.jsonl"]],
    ["demo__demo-1.traj.json", "mini-swe-agent", ["demo__demo-1.traj.json"]],
  ]);
  assert.equal(out.inputs[0]!.sessions[0]!.skipped["torn last line"], 1);
  const table = await runCli(["bench", "replay", join(fixtures, "claude-code")], { cwd: dir });
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^read main\.jsonl: claude-code, 3 sessions, 6 billed requests, hidden prefix 1997\/\d+\/\d+ tokens; skipped .*torn last line 1/m);
  // The other session's subagent is not main.jsonl's: in the folder it is an input of its own.
  assert.match(table.stdout, /^read agent-c3\.jsonl: claude-code, 1 billed requests/m);
});

test("--strategy recorded prints the simulator's error against the bills, per session and in total, equal to the hand count", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "three.jsonl");
  await writeFile(file, threeRequestSession());
  const json = await runCli(["bench", "replay", file, "--strategy", "recorded", "--json"], { cwd: dir });
  assert.equal(json.code, 0, json.stderr);
  const total = (JSON.parse(json.stdout) as Json).total[0]!;
  assert.equal(total.strategy, "recorded");
  assert.equal(total.budget, null);
  assert.deepEqual(total.simulatorError, { name: "total", format: "claude-code", ...HAND_COMPUTED });
  assert.deepEqual(total.sessionErrors, [{ name: "three.jsonl", format: "claude-code", ...HAND_COMPUTED }]);
  const table = await runCli(["bench", "replay", file, "--strategy", "recorded"], { cwd: dir });
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^simulator error \(recorded vs billed/m);
  const row = table.stdout.split("\n").find((l) => l.startsWith("three.jsonl  claude-code"));
  assert.ok(row, table.stdout);
  assert.deepEqual(row.split(/\s+/).slice(2), ["3", "2003", "2003", "+0.0%", "4036", "4050", "-0.3%", "0", "10", "-100.0%", "0.3317", "0.3304", "0.13", "0.995"]);
});

test("the real public logs in bench/corpus/real replay in their formats, with the simulator's error on their bills", async (t) => {
  const dir = await tempDir(t);
  const r = await runCli(["bench", "replay", join(real, "claude-code"), join(real, "codex"), join(real, "mini-swe-agent"), "--strategy", "recorded", "--json"], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as Json;
  const requests = (name: string) => out.inputs.find((i) => i.input === name)!.sessions.reduce((n, s) => n + s.billedRequests, 0);
  assert.deepEqual(out.inputs.map((i) => i.format), ["claude-code", "claude-code", "claude-code", "claude-code", "claude-code", "codex", "mini-swe-agent", "mini-swe-agent"]);
  // The request counts the sources' own tallies give (bench/corpus/real/README.md).
  assert.equal(requests("ccviewer__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"), 7);
  assert.equal(requests("ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"), 20, "the inline subagent's requests are sessions of their own");
  assert.equal(out.inputs.find((i) => i.input.startsWith("ccviewer__5c0375b4"))!.sessions.length, 3);
  assert.equal(requests("rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"), 39);
  assert.equal(requests("gemini-3-pro__matplotlib__matplotlib-24637.traj.json"), 41, "the reply with no action and its feedback turn read through");
  const total = out.total[0]!;
  assert.equal(requests("ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.prefix.jsonl"), 88);
  assert.equal(total.sessionErrors!.length, 13, "1 + 3 (two inline subagents) + 4 (three) + 1 + 1 Claude Code sessions, 1 Codex, 2 mini-swe-agent");
  for (const key of ["cacheReadErrorPct", "cacheWriteErrorPct", "inputErrorPct", "hitRateErrorPoints"]) assert.equal(typeof total.simulatorError![key], "number", key);
  assert.equal((total.simulatorError!.billed as { cacheReadTokens: number }).cacheReadTokens,
    103_219 + 324_259 + 1_715_052 + 107_559 + 140_387 + 1_027_328 + 402_983 + 120_198, "the bills summed once per request");
});

test("a rhema run against a real provider replays with the usage it reported as its bills", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/live.yaml": `prompt: Look around.
policy: ../policy.yaml
model: { provider: anthropic, name: claude-test }
checks:
  - { name: always, run: "true" }
`,
  });
  server.reply(
    { kind: "stream", blocks: [{ type: "tool_use", id: "toolu_1", name: "shell", input: { command: "true" } }], usage: { input_tokens: 4, cache_read_input_tokens: 0, cache_creation_input_tokens: 1500, output_tokens: 9 } },
    { kind: "stream", blocks: [{ type: "text", text: "Done." }], usage: { input_tokens: 6, cache_read_input_tokens: 1500, cache_creation_input_tokens: 40, output_tokens: 3 } },
  );
  const out = join(root, "run");
  const run = await runCli(["run", "suite", "--out", out], { cwd: root, env: cliEnv({ ANTHROPIC_API_KEY: "sk-test-key", ANTHROPIC_BASE_URL: server.baseUrl }) });
  assert.equal(run.code, 0, run.stderr);
  const r = await runCli(["bench", "replay", out, "--strategy", "recorded", "--json"], { cwd: root });
  assert.equal(r.code, 0, r.stderr);
  const json = JSON.parse(r.stdout) as Json;
  assert.deepEqual(json.inputs.map((i) => [i.format, i.sessions.map((s) => [s.requests, s.billedRequests, s.prefixTokens])]), [["rhema-run", [[2, 2, 0]]]]);
  const error = json.total[0]!.simulatorError as { billed: Record<string, number>; billedRequests: number };
  assert.equal(error.billedRequests, 2);
  assert.deepEqual(error.billed, { inputTokens: 10, cacheReadTokens: 1500, cacheWriteTokens: 1540, cacheWrite1hTokens: 0, hitRate: 1500 / 3050, billedEquivalent: 10 + 1.25 * 1540 + 0.1 * 1500 });
});
