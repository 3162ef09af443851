/**
 * Tool-call states (docs/design.md §6): intent → started → result, what a resume does with each, and a
 * reply cut at the output limit, against real tools on real temp folders.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CodingAgent, type CodingAgentConfig } from "../src/agent.js";
import type { Commit } from "../src/core/commit-hook.js";
import { CUT_REPLY_RESULT, INTERRUPTED_RESULT } from "../src/core/conversation.js";
import { nullSink } from "../src/core/events.js";
import type { Message, ToolResultBlock } from "../src/core/messages.js";
import type { ModelProvider, ModelRequest, StreamEvent } from "../src/core/provider.js";
import type { Session } from "../src/core/session.js";
import type { ProcessStart, Tool } from "../src/core/tool.js";
import { MemorySink } from "../src/store/memory-sink.js";
import { ScriptedProvider, type ScriptStep } from "../src/providers/scripted.js";
import { takeFingerprint } from "../src/tools/workspace-fingerprint.js";
import { tempDir } from "./support/temp-dir.js";
import { LINES_FILE, RecordingApproval, appendLineTool, waitTool } from "./support/test-tools.js";

const FIXED_NOW = () => new Date("2026-03-04T05:06:07Z");

function configFor(workspace: string, extra: Partial<CodingAgentConfig> = {}): CodingAgentConfig {
  return { workspace, builtinTools: false, tools: [appendLineTool()], now: FIXED_NOW, newId: () => "s", ...extra };
}
const lines = async (workspace: string) =>
  (await readFile(join(workspace, LINES_FILE), "utf8").catch(() => "")).split("\n").filter(Boolean);
const resultsOf = (messages: Message[]): ToolResultBlock[] =>
  messages.flatMap((m) => m.content.filter((b): b is ToolResultBlock => b.type === "tool_result"));
const openCall = (id: string, tag: string): Message[] => [
  { role: "user", content: [{ type: "text", text: "go" }] },
  { role: "assistant", content: [{ type: "tool_call", id, name: "append_line", input: { tag } }] },
];

test("records each call's state at its boundary: pending with the intent, started after the approval and before the call runs, completed with its result", async (t) => {
  const workspace = await tempDir(t);
  const steps: ScriptStep[] = [{ call: "append_line", input: { tag: "a" } }, { say: "done" }];
  const agent = new CodingAgent(new ScriptedProvider(steps), configFor(workspace));
  const approval = new RecordingApproval();
  const seen: Array<{ boundary: string; calls: Session["calls"]; lines: string[]; approvals: number }> = [];
  agent.setCommitHook(async (c: Commit) => {
    seen.push({ boundary: c.boundary, calls: structuredClone(c.session.calls), lines: await lines(workspace), approvals: approval.requests.length });
  });
  await agent.turn("go", nullSink, approval);
  const started = seen.find((s) => s.boundary === "started")!;
  assert.deepEqual(seen.map((s) => s.boundary), ["input", "intent", "started", "result", "intent"]);
  assert.equal(started.approvals, 1, "approved before started");
  assert.deepEqual(started.lines, [], "nothing ran before started");
  assert.deepEqual(seen.map((s) => s.calls?.["call_0_0"]?.state), [undefined, "pending", "started", "completed", "completed"]);
  assert.deepEqual(started.calls!["call_0_0"], { state: "started", at: "2026-03-04T05:06:07.000Z", fingerprint: { files: {}, capped: false, paths: [LINES_FILE] } }, "a write call carries the fingerprint of its planned paths from before it");
  assert.deepEqual(seen.find((s) => s.boundary === "result")!.calls, { call_0_0: { state: "completed", at: "2026-03-04T05:06:07.000Z" } });
  assert.deepEqual(await lines(workspace), ["a"]);
});

test("a tool that reports its own start commits started inside onStarted, with its process group", async (t) => {
  const workspace = await tempDir(t);
  const info: ProcessStart = { host: "box", pgid: 4242, startTime: 99 };
  const order: string[] = [];
  const selfStarting: Tool = {
    spec: { name: "spawn", description: "Spawns.", inputSchema: { type: "object" } },
    effect: "exec",
    reportsStart: true,
    async run(_input, ctx) {
      order.push("spawned");
      await ctx.onStarted!(info);
      order.push("released");
      appendFileSync(join(ctx.workspace, LINES_FILE), "ran\n");
      return { content: "ok" };
    },
  };
  const agent = new CodingAgent(new ScriptedProvider([{ call: "spawn", input: {} }, { say: "done" }]), configFor(workspace, { tools: [selfStarting], fingerprint: false }));
  agent.setCommitHook(async (c) => {
    if (c.boundary === "started") order.push(`started ${JSON.stringify(c.session.calls)}`);
  });
  await agent.turn("go", nullSink, new RecordingApproval());
  assert.deepEqual(order, [
    "spawned",
    `started ${JSON.stringify({ call_0_0: { state: "started", at: "2026-03-04T05:06:07.000Z", host: "box", pgid: 4242, startTime: 99 } })}`,
    "released",
  ]);
});

test("a commit that fails inside onStarted fails the turn, not just the call", async (t) => {
  const workspace = await tempDir(t);
  let released = false;
  const selfStarting: Tool = {
    spec: { name: "spawn", description: "Spawns.", inputSchema: { type: "object" } },
    effect: "exec",
    reportsStart: true,
    async run(_input, ctx) {
      try {
        await ctx.onStarted!({ host: "box", pgid: 1, startTime: 1 });
        released = true;
      } catch {
        // a tool that swallows the failure and reports an error result of its own
      }
      return { content: "spawn failed", isError: true };
    },
  };
  const agent = new CodingAgent(new ScriptedProvider([{ call: "spawn", input: {} }, { say: "done" }]), configFor(workspace, { tools: [selfStarting] }));
  agent.setCommitHook(async (c) => {
    if (c.boundary === "started") throw new Error("disk full");
  });
  await assert.rejects(agent.turn("go", nullSink, new RecordingApproval()), /started boundary: disk full/);
  assert.equal(released, false);
});

test("on resume, a call in the intent with no started record is approved and run now", async (t) => {
  const workspace = await tempDir(t);
  const provider = new ScriptedProvider([{ say: "done" }]);
  const first = new CodingAgent(provider, configFor(workspace));
  first.session.messages = openCall("call_0_0", "once");
  const approval = new RecordingApproval();
  const resumed = CodingAgent.fromSession(provider, configFor(workspace), first.session);
  const sink = new MemorySink();
  await resumed.retryTurnWithCancel(sink, approval, new AbortController().signal);
  assert.deepEqual(await lines(workspace), ["once"], "the call that never started ran, once");
  assert.deepEqual(approval.requests.map((r) => r.callId), ["call_0_0"], "it was approved first");
  assert.deepEqual(resultsOf(resumed.session.messages), [{ type: "tool_result", callId: "call_0_0", content: "appended once" }]);
  assert.ok(!sink.events.some((e) => e.type === "revived"), "nothing was revived");
});

test("on resume, a started call is stopped, gets the synthetic result naming what changed, and never runs again", async (t) => {
  const workspace = await tempDir(t);
  await writeFile(join(workspace, "keep.txt"), "same");
  await writeFile(join(workspace, "edit.txt"), "before");
  await writeFile(join(workspace, "gone.txt"), "x");
  const fingerprint = await takeFingerprint(workspace);
  // What the call did before the kill:
  await writeFile(join(workspace, "edit.txt"), "after, longer");
  await writeFile(join(workspace, "new.txt"), "n");
  await rm(join(workspace, "gone.txt"));
  const stopped: ProcessStart[] = [];
  const config = configFor(workspace, { stopProcesses: async (info) => (stopped.push(info), true) });
  const provider = new ScriptedProvider([{ say: "done" }]);
  const session = new CodingAgent(provider, config).session;
  session.messages = openCall("call_0_0", "once");
  const pidScope = { bootId: "b00t", pidNamespace: "pid:[4026531836]" };
  session.calls = { call_0_0: { state: "started", at: "2026-03-04T05:06:07.000Z", host: "box", pgid: 4242, startTime: 99, pidScope, fingerprint } };
  const sink = new MemorySink();
  const resumed = CodingAgent.fromSession(provider, config, session);
  await resumed.retryTurnWithCancel(sink, new RecordingApproval(), new AbortController().signal);
  assert.deepEqual(await lines(workspace), [], "the started call was not executed again");
  assert.deepEqual(stopped, [{ host: "box", pgid: 4242, startTime: 99, pidScope }]);
  assert.deepEqual(resultsOf(resumed.session.messages), [{
    type: "tool_result", callId: "call_0_0", isError: true,
    content: `${INTERRUPTED_RESULT}; it was still running when the run resumed; stopped; since it started: modified edit.txt, deleted gone.txt, created new.txt`,
  }]);
  assert.deepEqual(resumed.session.calls, { call_0_0: { state: "error", at: "2026-03-04T05:06:07.000Z" } }, "the revived call is answered, an error");
  assert.ok(sink.events.some((e) => e.type === "revived" && e.callIds[0] === "call_0_0"));
});

test("a write call's fingerprint covers the paths it planned, an exec call's the workspace", async (t) => {
  const workspace = await tempDir(t);
  await writeFile(join(workspace, LINES_FILE), "old\n");
  await writeFile(join(workspace, "other.txt"), "not the call's");
  const [lines0, other0] = await Promise.all([LINES_FILE, "other.txt"].map((f) => stat(join(workspace, f))));
  const steps: ScriptStep[] = [{ call: "append_line", input: { tag: "a" } }, { call: "wait", input: { ms: 0 } }, { say: "done" }];
  const agent = new CodingAgent(new ScriptedProvider(steps), configFor(workspace, { tools: [appendLineTool(), waitTool] }));
  const fingerprints: unknown[] = [];
  agent.setCommitHook(async (c: Commit) => {
    const started = c.boundary === "started" ? Object.values(c.session.calls ?? {}).find((r) => r.state === "started") : undefined;
    if (started?.state === "started") fingerprints.push(started.fingerprint);
  });
  await agent.turn("go", nullSink, new RecordingApproval());
  // Nothing touches lines.txt after the append: its mtime now is the one the exec call's walk saw.
  const lines1 = await stat(join(workspace, LINES_FILE));
  assert.deepEqual(fingerprints, [
    { files: { [LINES_FILE]: [4, lines0!.mtimeMs] }, capped: false, paths: [LINES_FILE] },
    { files: { [LINES_FILE]: [6, lines1.mtimeMs], "other.txt": [14, other0!.mtimeMs] }, capped: false },
  ], "the write call's of its own path; the exec call's the workspace's walk");
});

test("on resume, a started write call's result names what changed among its own paths: the workspace is not walked", async (t) => {
  const workspace = await tempDir(t);
  await writeFile(join(workspace, LINES_FILE), "old\n");
  const fingerprint = await takeFingerprint(workspace, { paths: [LINES_FILE] });
  // What the call did before the kill, and what something else did meanwhile (not the call's to report):
  appendFileSync(join(workspace, LINES_FILE), "once\n");
  await writeFile(join(workspace, "unrelated.txt"), "x");
  const config = configFor(workspace);
  const provider = new ScriptedProvider([{ say: "done" }]);
  const session = new CodingAgent(provider, config).session;
  session.messages = openCall("call_0_0", "once");
  session.calls = { call_0_0: { state: "started", at: "2026-03-04T05:06:07.000Z", fingerprint } };
  const resumed = CodingAgent.fromSession(provider, config, session);
  await resumed.retryTurnWithCancel(nullSink, new RecordingApproval(), new AbortController().signal);
  assert.deepEqual(resultsOf(resumed.session.messages).map((r) => r.content), [`${INTERRUPTED_RESULT}; since it started: modified ${LINES_FILE}`]);
});

/** Answers the first request with a reply cut at the output limit, the rest with `then`. */
class CutReplyProvider implements ModelProvider {
  readonly id = "test:cut";
  readonly requests: ModelRequest[] = [];
  async *stream(req: ModelRequest): AsyncIterable<StreamEvent> {
    this.requests.push(structuredClone(req));
    if (this.requests.length === 1) {
      yield { type: "tool_call", id: "cut_1", name: "append_line", input: { tag: "cut" } };
      yield { type: "stop", reason: "max_tokens" };
    } else {
      yield { type: "text", delta: "done" };
      yield { type: "stop", reason: "end_turn" };
    }
  }
}

test("a reply cut at the output limit runs none of its calls, and each result says it was cut", async (t) => {
  const workspace = await tempDir(t);
  const provider = new CutReplyProvider();
  const agent = new CodingAgent(provider, configFor(workspace));
  const boundaries: string[] = [];
  agent.setCommitHook(async (c) => void boundaries.push(`${c.boundary}:${resultsOf(c.session.messages).length}`));
  const approval = new RecordingApproval();
  await agent.turn("go", nullSink, approval);
  assert.deepEqual(await lines(workspace), [], "the cut call did not run");
  assert.deepEqual(approval.requests, [], "nor was it asked for approval");
  assert.deepEqual(resultsOf(agent.session.messages), [{ type: "tool_result", callId: "cut_1", content: CUT_REPLY_RESULT, isError: true }]);
  assert.deepEqual(boundaries, ["input:0", "intent:1", "intent:1"], "the results are committed with the intent itself");
  assert.equal(provider.requests.length, 2, "the model was asked again");
});

/** A tool whose call ends the turn (as a structured answer's final_answer does); counts its runs. */
function endingTool(runs: string[]): Tool {
  return {
    spec: { name: "answer", description: "Give the answer.", inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } },
    effect: "read", endsTurn: true,
    async run(input) {
      runs.push(JSON.stringify(input));
      return { content: "recorded" };
    },
  };
}

test("a call of a tool that ends turns ends the turn after its step, whatever its result: the model is not asked again", async (t) => {
  const workspace = await tempDir(t);
  const runs: string[] = [];
  const provider = new ScriptedProvider([{ call: "answer", input: { n: "x" } }, { call: "answer", input: { n: 1 } }, { say: "never asked" }]);
  const agent = new CodingAgent(provider, configFor(workspace, { tools: [endingTool(runs)] }));
  const first = await agent.turn("go", nullSink, new RecordingApproval());
  assert.deepEqual([first.steps, runs], [1, []], "an invalid input ends the turn too, answered with its errors");
  assert.match(JSON.stringify(resultsOf(agent.session.messages)), /Invalid input for `answer`/);
  const second = await agent.retryTurnWithCancel(nullSink, new RecordingApproval(), new AbortController().signal);
  assert.deepEqual([second.steps, runs], [1, ['{"n":1}']]);
  assert.equal(agent.session.messages.length, 5, "no request after the answer");
});

test("on resume, an unstarted call of a tool that ends turns is run and the turn ends there, the model not asked", async (t) => {
  const workspace = await tempDir(t);
  const runs: string[] = [];
  const provider = new ScriptedProvider([{ say: "never asked" }]);
  const config = configFor(workspace, { tools: [endingTool(runs)] });
  const first = new CodingAgent(provider, config);
  first.session.messages = [
    { role: "user", content: [{ type: "text", text: "go" }] },
    { role: "assistant", content: [{ type: "tool_call", id: "call_0_0", name: "answer", input: { n: 7 } }] },
  ];
  const resumed = CodingAgent.fromSession(provider, config, first.session);
  const out = await resumed.retryTurnWithCancel(nullSink, new RecordingApproval(), new AbortController().signal);
  assert.deepEqual([out.steps, runs], [0, ['{"n":7}']]);
  assert.deepEqual(resultsOf(resumed.session.messages), [{ type: "tool_result", callId: "call_0_0", content: "recorded" }]);
  assert.equal(resumed.session.messages.length, 3, "no model request");
});
