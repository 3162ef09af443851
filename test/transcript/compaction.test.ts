/**
 * Compaction in the engine: a long scripted turn under a small budget flushes several times;
 * between flushes the requests grow by appending only, a flush changes only what follows the
 * summaries, the flush is a committed boundary, and a resume adopts the saved summaries without
 * asking the worker again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CodingAgent, type CodingAgentConfig } from "../../src/agent.js";
import type { Commit } from "../../src/core/commit-hook.js";
import type { AgentEvent } from "../../src/core/events.js";
import type { Message } from "../../src/core/messages.js";
import type { Session } from "../../src/core/session.js";
import type { ModelRequest } from "../../src/core/provider.js";
import { MemorySink } from "../../src/store/memory-sink.js";
import { ScriptedProvider, type ScriptStep } from "../../src/providers/scripted.js";
import type { CompactionWorker } from "../../src/transcript/compaction-worker.js";
import { eliderWorker } from "../../src/transcript/compaction-worker.js";
import { RecordingApproval, appendLineTool } from "../support/test-tools.js";
import { tempDir } from "../support/temp-dir.js";

const STEPS = 40;
const BUDGET = 6_000;
/** Each step appends a line with a long tag, so the log outgrows the budget several times. */
const script = (): ScriptStep[] => [
  ...Array.from({ length: STEPS }, (_, k): ScriptStep => ({ call: "append_line", input: { tag: `step-${k}-${"x".repeat(900)}` } })),
  { say: "done" },
];

let clockMs = Date.parse("2026-03-04T05:06:07Z");
const now = () => new Date((clockMs += 15_000));

function countingWorker(): CompactionWorker & { calls: number } {
  const worker = {
    kind: "elider" as const,
    calls: 0,
    async summarize(req: Parameters<CompactionWorker["summarize"]>[0], signal: AbortSignal) {
      worker.calls += 1;
      return eliderWorker.summarize(req, signal);
    },
  };
  return worker;
}

async function setup(t: { after(fn: () => unknown): void }, worker = countingWorker()) {
  const workspace = await tempDir(t);
  const provider = new ScriptedProvider(script(), { name: "long", now: () => clockMs });
  const config: CodingAgentConfig = {
    workspace, builtinTools: false, tools: [appendLineTool()], now, maxTurnSteps: STEPS + 5,
    transcript: { budgetTokens: BUDGET, blockTokens: 600 }, compactionWorker: worker,
  };
  return { provider, config, worker, agent: new CodingAgent(provider, config) };
}

const json = (m: Message) => JSON.stringify(m);

test("between flushes each request extends the one before; a flush changes only what follows the summaries", async (t) => {
  const { agent, provider } = await setup(t);
  const sink = new MemorySink();
  await agent.turn("go", sink, new RecordingApproval());
  const requests = provider.parsedRequests();
  const flushEvents = sink.events.filter((e): e is Extract<AgentEvent, { type: "flush" }> => e.type === "flush");
  const flushSteps = new Set(flushEvents.map((e) => e.step));
  const modeAt = new Map(flushEvents.map((e) => [e.step, e.mode]));
  assert.ok(flushEvents.filter((e) => e.mode === "append").length >= 2, "most flushes append a summary");
  assert.ok(flushSteps.size >= 3, `flushed ${flushSteps.size} times`);
  assert.equal(agent.transcriptStats()!.flushes, flushSteps.size);
  for (let k = 1; k < requests.length; k++) {
    const [before, after] = [requests[k - 1]!, requests[k]!];
    assert.equal(after.system, before.system);
    assert.deepEqual(after.tools, before.tools);
    if (!flushSteps.has(k + 1)) {
      // Everything the earlier request sent is sent again, byte for byte, before the new tail.
      assert.deepEqual(after.messages.slice(0, before.messages.length).map(json), before.messages.map(json), `request ${k + 1} re-sends ${k}`);
    } else {
      // The summaries message keeps its earlier blocks and appends one (or is merged anew).
      const [old, fresh] = [before.messages[0]!, after.messages[0]!];
      const oldHadSummaries = old.content[0]?.type === "text" && old.content[0].text.startsWith("[This conversation was compacted");
      if (oldHadSummaries && modeAt.get(k + 1) === "append") {
        assert.equal(fresh.content.length, old.content.length + 1, "an appended summary adds one block");
        assert.deepEqual(fresh.content.slice(0, old.content.length), old.content, "and keeps the earlier ones byte for byte");
      }
      // What follows the summaries is the raw log's newest part, verbatim.
      const rawBefore = before.messages.slice(-3).map(json);
      const rawAfter = after.messages.map(json);
      for (const m of rawBefore.slice(1)) assert.ok(rawAfter.includes(m), "the newest messages survive a flush verbatim");
    }
    assertCallsWithResults(after);
  }
  assert.ok(Math.max(...requests.map(tokensOf)) <= BUDGET * 1.1, "every request stays about the budget");
});

test("a flush is a committed boundary whose sections carry the summaries", async (t) => {
  const { agent } = await setup(t);
  const commits: Array<Pick<Commit, "boundary"> & { summaries: number }> = [];
  agent.setCommitHook(async (c) => void commits.push({ boundary: c.boundary, summaries: c.sections.filter((s) => s.summary !== null).length }));
  await agent.turn("go", new MemorySink(), new RecordingApproval());
  const flushes = commits.filter((c) => c.boundary === "flush");
  assert.ok(flushes.length >= 3);
  assert.ok(flushes.every((c) => c.summaries >= 1));
});

test("a resume adopts the saved summaries: the next request equals the uninterrupted run's, and the worker is not asked again", async (t) => {
  const straight = await setup(t);
  await straight.agent.turn("go", new MemorySink(), new RecordingApproval());
  const expected = straight.provider.parsedRequests().map((r) => JSON.stringify(r.messages));

  // The same run, killed right after its second flush was committed (the hook fails there).
  const first = await setup(t);
  let flushes = 0;
  let saved: Session | null = null;
  first.agent.setCommitHook(async (c) => {
    if (c.boundary !== "flush" || ++flushes < 2) return;
    saved = { ...structuredClone(c.session), transcript: { sections: structuredClone(c.sections), stats: c.stats } };
    throw new Error("killed");
  });
  await assert.rejects(first.agent.turn("go", new MemorySink(), new RecordingApproval()), /killed/);
  assert.ok(saved, "the second flush was committed");
  assert.equal(first.worker.calls, 2);

  const resumedWorker = countingWorker();
  const again = await setup(t, resumedWorker);
  const resumed = CodingAgent.fromSession(again.provider, again.config, saved);
  let workerCallsAtFirstRequest = -1;
  const sink = { emit(e: AgentEvent) { if (e.type === "request" && workerCallsAtFirstRequest < 0) workerCallsAtFirstRequest = resumedWorker.calls; } };
  await resumed.retryTurnWithCancel(sink, new RecordingApproval(), new AbortController().signal);
  const next = JSON.stringify(again.provider.parsedRequests()[0]!.messages);
  assert.ok(expected.includes(next), "the resumed request is byte for byte one the uninterrupted run sent");
  assert.equal(workerCallsAtFirstRequest, 0, "the saved flush is not summarized again");
  assert.equal(resumed.transcriptStats()!.flushes, straight.agent.transcriptStats()!.flushes, "the stats read as one run");
});

test("saved sections that no longer tile the log are rebuilt, not trusted", async (t) => {
  const { agent } = await setup(t);
  await agent.turn("go", new MemorySink(), new RecordingApproval());
  const sections = agent.transcriptSections();
  assert.ok(sections.some((s) => s.summary !== null));
  const again = await setup(t);
  const edited = structuredClone(agent.session.messages);
  (edited[0]!.content[0] as { text: string }).text = "a different task";
  const resumed = CodingAgent.fromSession(again.provider, again.config, { ...agent.session, messages: edited, transcript: { sections, stats: null } });
  resumed.adoptTranscriptSections(sections);
  await resumed.turn("and more", new MemorySink(), new RecordingApproval()).catch(() => {});
  const savedSummaries = new Set(sections.flatMap((x) => (x.summary === null ? [] : [x.summary])));
  const first = again.provider.parsedRequests()[0]!;
  const sentText = JSON.stringify(first.messages);
  for (const summary of savedSummaries) assert.ok(!sentText.includes(JSON.stringify(summary).slice(1, -1)), "a stale summary is never sent");
  assert.ok(resumed.transcriptSections().every((x) => x.summary === null || !savedSummaries.has(x.summary)), "the stale sections were dropped");
});

function tokensOf(req: ModelRequest): number {
  return Math.ceil(JSON.stringify(req.messages).length / 4);
}

function assertCallsWithResults(req: ModelRequest): void {
  const answered = new Set(req.messages.flatMap((m) => m.content.flatMap((b) => (b.type === "tool_result" ? [b.callId] : []))));
  for (const m of req.messages) {
    for (const b of m.content) if (b.type === "tool_call") assert.ok(answered.has(b.id), `call ${b.id} is sent with its result`);
  }
}
