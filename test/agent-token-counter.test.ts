/**
 * The agent counts with one token counter, recorded in the session at the first turn: a resume
 * counts with the recorded one whatever it is given, so its flush points and requests are the
 * uninterrupted run's, byte for byte (docs/compaction.md, "Token counts").
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CodingAgent, type CodingAgentConfig } from "../src/agent.js";
import { BudgetError } from "../src/core/errors.js";
import type { AgentEvent, EventSink } from "../src/core/events.js";
import { calibratedCounter, chars4Counter, type TokenCounter } from "../src/core/token-counter.js";
import { ScriptedProvider, type ScriptStep } from "../src/providers/scripted.js";
import { eliderWorker } from "../src/transcript/compaction-worker.js";
import { tempDir } from "./support/temp-dir.js";
import { RecordingApproval, appendLineTool } from "./support/test-tools.js";

const NOW = () => new Date("2026-03-04T05:06:07Z");
const STEPS: ScriptStep[] = [
  ...Array.from({ length: 24 }, (_, k): ScriptStep => ({ call: "append_line", input: { tag: `s${k}${"x".repeat(700)}` } })),
  { say: "done" },
];
const A = calibratedCounter("calibrated:aaaaaaaaaaaaaaaa", { perChar: { prose: 0.25, code: 0.3, json: 0.3, tool_result: 0.3 }, perMessage: 4, perToolBlock: 4 });
const B = calibratedCounter("calibrated:bbbbbbbbbbbbbbbb", { perChar: { prose: 0.5, code: 0.6, json: 0.6, tool_result: 0.6 }, perMessage: 4, perToolBlock: 4 });

function flushSink(flushes: string[]): EventSink {
  return { emit: (e: AgentEvent) => void (e.type === "flush" && flushes.push(`${e.start}-${e.end}`)) };
}

function config(workspace: string, counter: TokenCounter, extra: Partial<CodingAgentConfig> = {}): CodingAgentConfig {
  return {
    workspace, builtinTools: false, tools: [appendLineTool()], now: NOW, newId: () => "s-1", maxTurnSteps: 40,
    transcript: { budgetTokens: 6_000, blockTokens: 600 }, compactionWorker: eliderWorker, tokenCounter: counter, ...extra,
  };
}

async function uninterrupted(workspace: string, counter: TokenCounter): Promise<{ flushes: string[]; requests: string[] }> {
  const provider = new ScriptedProvider(STEPS, { name: "count" });
  const flushes: string[] = [];
  await new CodingAgent(provider, config(workspace, counter)).turn("go", flushSink(flushes), new RecordingApproval());
  return { flushes, requests: provider.requests };
}

test("a resume counts with the counter the session recorded, not the one it is given: the same flushes and requests", async (t) => {
  const workspace = await tempDir(t);
  const whole = await uninterrupted(workspace, A);
  assert.ok(whole.flushes.length >= 2, `the run flushes: ${whole.flushes.join(", ")}`);
  const other = await uninterrupted(await tempDir(t), B);
  assert.notDeepEqual(other.flushes, whole.flushes, "counted with the other calibration, the flush points move");

  const provider = new ScriptedProvider(STEPS, { name: "count" });
  const flushes: string[] = [];
  // Stopped (as a kill would leave it: committed at its last boundary) after 17 requests (between the two flushes).
  const stopAt = (stats: { requests: number } | null) => ((stats?.requests ?? 0) >= 17 ? { scope: "task" as const, measure: "tokens" as const, limit: 1, spent: 1 } : null);
  const first = new CodingAgent(provider, config(workspace, A, { budget: (_who, stats) => stopAt(stats) }));
  const err = await first.turn("go", flushSink(flushes), new RecordingApproval()).catch((e: unknown) => e);
  assert.ok(err instanceof BudgetError, String(err));
  assert.deepEqual(first.session.tokenCounter, A.record, "the session records its counter");
  assert.deepEqual(flushes, whole.flushes.slice(0, 1), "it flushed once before the stop");

  // As the checkpoint holds it: the session with the mirror's sections and stats.
  const saved = { ...structuredClone(first.session), transcript: { sections: first.transcriptSections(), stats: first.transcriptStats() } };
  const resumed = CodingAgent.fromSession(provider, config(workspace, B), saved);
  assert.equal(resumed.tokenCounter.id, A.id);
  await resumed.retryTurnWithCancel(flushSink(flushes), new RecordingApproval(), new AbortController().signal);
  assert.deepEqual(flushes, whole.flushes);
  assert.equal(provider.requests.length, whole.requests.length);
  assert.ok(provider.requests.every((r, i) => r === whole.requests[i]), "the resumed conversation's requests are the uninterrupted one's, byte for byte");
});

test("a session with messages and no recorded counter was counted with chars4; a tokenizer's record needs that tokenizer", async (t) => {
  const workspace = await tempDir(t);
  const provider = new ScriptedProvider(STEPS, { name: "count" });
  const agent = new CodingAgent(provider, config(workspace, A, { maxTurnSteps: 2 }));
  await agent.turn("go", { emit() {} }, new RecordingApproval()).catch(() => {});
  const { tokenCounter: _recorded, ...older } = structuredClone(agent.session);
  assert.equal(CodingAgent.fromSession(provider, config(workspace, B), older).tokenCounter, chars4Counter);
  const tokenized = { ...older, tokenCounter: { kind: "tokenizer" as const, encoding: "o200k_base" as const } };
  assert.throws(() => CodingAgent.fromSession(provider, config(workspace, B), tokenized), /counted with the .*o200k_base.* token counter; continue it with that counter/);
});
