/**
 * The engine's budget hook: asked before each model request (the task model's and the
 * compaction worker's) with the stats as they stand; a spent budget stops the turn there with a
 * BudgetError, the session committed at its last boundary and no request begun, and the turn
 * continues from that checkpoint once the budget allows.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CodingAgent, type CodingAgentConfig } from "../src/agent.js";
import type { Commit } from "../src/core/commit-hook.js";
import { BudgetError, type SpentBudget } from "../src/core/errors.js";
import { nullSink } from "../src/core/events.js";
import { unansweredCalls } from "../src/core/messages.js";
import { spentTokens, type TranscriptStats } from "../src/core/transcript-types.js";
import { ScriptedProvider, type ScriptStep } from "../src/providers/scripted.js";
import { eliderWorker, type CompactionWorker } from "../src/transcript/compaction-worker.js";
import { tempDir } from "./support/temp-dir.js";
import { RecordingApproval, appendLineTool } from "./support/test-tools.js";

const NOW = () => new Date("2026-03-04T05:06:07Z");
const steps = (n: number, pad = 0): ScriptStep[] => [
  ...Array.from({ length: n }, (_, k): ScriptStep => ({ call: "append_line", input: { tag: `s${k}${"x".repeat(pad)}` } })),
  { say: "done" },
];

/** A token budget as the runner would give one: spent once the stats reach `limit`. */
const tokenBudget = (limit: number, seen: Array<{ who: string; requests: number }>) =>
  (who: "task" | "worker", stats: TranscriptStats | null): SpentBudget | null => {
    seen.push({ who, requests: stats?.requests ?? -1 });
    const spent = stats ? spentTokens(stats) : 0;
    return spent >= limit ? { scope: "task", measure: "tokens", limit, spent } : null;
  };

test("a spent budget stops the turn before the next request, committed, and a larger one continues it", async (t) => {
  const workspace = await tempDir(t);
  const provider = new ScriptedProvider(steps(4), { name: "budget" });
  const seen: Array<{ who: string; requests: number }> = [];
  const base: CodingAgentConfig = { workspace, builtinTools: false, tools: [appendLineTool()], now: NOW, newId: () => "s-1" };
  const agent = new CodingAgent(provider, { ...base, budget: tokenBudget(1, seen) });
  const commits: Commit["boundary"][] = [];
  agent.setCommitHook(async (c) => void commits.push(c.boundary));
  // The first request is free (nothing spent yet); the second would start past the budget.
  const err = await agent.turn("go", nullSink, new RecordingApproval()).catch((e: unknown) => e);
  assert.ok(err instanceof BudgetError, String(err));
  assert.equal(err.code, "budget");
  assert.equal(err.budget.scope, "task");
  assert.match(err.message, /the task's token budget of 1 is spent \(\d+\): stopped before the next model request/);
  assert.equal(provider.requests.length, 1, "the request past the budget never started");
  assert.deepEqual(seen.map((s) => s.requests), [0, 1], "asked before each request with the stats as they stood");
  assert.deepEqual(commits, ["input", "intent", "started", "result"], "the stop comes after the last boundary's commit");
  assert.deepEqual(unansweredCalls(agent.session.messages), []);

  const stats = agent.transcriptStats()!;
  const resumed = CodingAgent.fromSession(provider, { ...base, budget: tokenBudget(1_000_000, seen) }, structuredClone(agent.session));
  resumed.carryTranscriptStats(stats);
  const out = await resumed.retryTurnWithCancel(nullSink, new RecordingApproval(), new AbortController().signal);
  assert.equal(out.stopReason, "end_turn");
  assert.equal(provider.requests.length, 5, "the stopped call is made once, on the resume");
  assert.equal(resumed.transcriptStats()!.requests, 5, "the carried stats count the stopped run's request");
});

test("a spent budget stops a flush before the compaction worker's request", async (t) => {
  const workspace = await tempDir(t);
  const provider = new ScriptedProvider(steps(30, 900), { name: "flush" });
  const worker: CompactionWorker & { calls: number } = {
    kind: "model",
    calls: 0,
    async summarize(req, signal) {
      worker.calls += 1;
      return eliderWorker.summarize(req, signal);
    },
  };
  const asked: string[] = [];
  const budget = (who: "task" | "worker"): SpentBudget | null => {
    asked.push(who);
    return who === "worker" ? { scope: "run", measure: "cost", limit: 0.5, spent: 0.75 } : null;
  };
  const agent = new CodingAgent(provider, {
    workspace, builtinTools: false, tools: [appendLineTool()], now: NOW, maxTurnSteps: 40,
    transcript: { budgetTokens: 6_000, blockTokens: 600 }, compactionWorker: worker, budget,
  });
  const err = await agent.turn("go", nullSink, new RecordingApproval()).catch((e: unknown) => e);
  assert.ok(err instanceof BudgetError, String(err));
  assert.match(err.message, /^the run's cost budget of \$0\.5000 is spent \(\$0\.7500\): stopped before the compaction worker's request/);
  assert.equal(worker.calls, 0, "the worker was never asked");
  assert.equal(asked.at(-1), "worker");
  assert.equal(agent.transcriptStats()!.flushes, 0);
  assert.equal(provider.requests.length, asked.filter((w) => w === "task").length, "every main request was checked first");
});

test("an elider flush makes no request, so no budget is asked for it", async (t) => {
  const workspace = await tempDir(t);
  const provider = new ScriptedProvider(steps(30, 900), { name: "elide" });
  const asked: string[] = [];
  const agent = new CodingAgent(provider, {
    workspace, builtinTools: false, tools: [appendLineTool()], now: NOW, maxTurnSteps: 40,
    transcript: { budgetTokens: 6_000, blockTokens: 600 }, compactionWorker: eliderWorker,
    budget: (who) => (asked.push(who), null),
  });
  await agent.turn("go", nullSink, new RecordingApproval());
  assert.ok(agent.transcriptStats()!.flushes > 0, "the turn flushed");
  assert.deepEqual([...new Set(asked)], ["task"]);
  assert.equal(asked.length, provider.requests.length);
});
