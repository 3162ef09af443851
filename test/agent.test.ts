/**
 * CodingAgent: every behaviour the engine promises (docs/design.md §1 and §6), against the scripted provider
 * (the shared fake, which records the exact requests it receives) on real temp folders.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CodingAgent, type CodingAgentConfig } from "../src/agent.js";
import type { Commit } from "../src/core/commit-hook.js";
import { INTERRUPTED_RESULT } from "../src/core/conversation.js";
import { CancelledError, CodingAgentError, ProviderError, RhemaError, SessionFileError } from "../src/core/errors.js";
import { nullSink } from "../src/core/events.js";
import { MemorySink } from "../src/store/memory-sink.js";
import { textOf, unansweredCalls, type Message, type ToolResultBlock } from "../src/core/messages.js";
import { SESSION_VERSION, type Session } from "../src/core/session.js";
import { ScriptedProvider, type ScriptStep } from "../src/providers/scripted.js";
import { sectionsTile } from "../src/transcript/transcript-mirror.js";
import { tempDir } from "./support/temp-dir.js";
import { LINES_FILE, RecordingApproval, appendLineTool, explodeTool, waitTool } from "./support/test-tools.js";

const FIXED_NOW = () => new Date("2026-03-04T05:06:07Z");
let ids = 0;

async function setup(t: { after(fn: () => unknown): void }, steps: ScriptStep[], extra: Partial<CodingAgentConfig> = {}) {
  const workspace = await tempDir(t);
  const provider = new ScriptedProvider(steps, { name: "test" });
  const config: CodingAgentConfig = {
    workspace, builtinTools: false, tools: [appendLineTool(), waitTool, explodeTool],
    now: FIXED_NOW, newId: () => `session-${++ids}`, ...extra,
  };
  return { workspace, provider, config, agent: new CodingAgent(provider, config) };
}

const lines = async (workspace: string) =>
  (await readFile(join(workspace, LINES_FILE), "utf8").catch(() => "")).split("\n").filter(Boolean);
const resultsOf = (messages: Message[]): ToolResultBlock[] =>
  messages.flatMap((m) => m.content.filter((b): b is ToolResultBlock => b.type === "tool_result"));
const approval = () => new RecordingApproval();

test("canonicalizes the workspace through symlinks at construction", async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, "real"));
  await symlink(join(dir, "real"), join(dir, "link"));
  const agent = new CodingAgent(new ScriptedProvider([]), { workspace: join(dir, "link"), builtinTools: false });
  assert.match(agent.system()!, new RegExp(`Workspace: ${join(dir, "real")}\n`));
});

test("fails construction when the workspace is missing", () => {
  assert.throws(
    () => new CodingAgent(new ScriptedProvider([]), { workspace: "/nonexistent/rhema-ws" }),
    (err: unknown) => err instanceof CodingAgentError && err.code === "workspace_missing" && /nonexistent\/rhema-ws/.test(err.message),
  );
});

test("rejects a maxTurnSteps that is not a whole number from 1 up", async (t) => {
  const workspace = await tempDir(t);
  assert.throws(() => new CodingAgent(new ScriptedProvider([]), { workspace, maxTurnSteps: 0 }), /maxTurnSteps.*got `?0/);
});

test("renders the system prompt with the environment report and AGENTS.md", async (t) => {
  const workspace = await tempDir(t);
  await writeFile(join(workspace, "AGENTS.md"), "Always run npm test.\n");
  const agent = new CodingAgent(new ScriptedProvider([]), { workspace, builtinTools: false, tools: [waitTool], now: FIXED_NOW });
  const system = agent.system()!;
  for (const line of [`Workspace: ${workspace}`, "Shell: bash", "Date: 2026-03-04", "Tools: wait", "# Project instructions (AGENTS.md)", "Always run npm test."]) {
    assert.ok(system.includes(line), `missing ${JSON.stringify(line)} in\n${system}`);
  }
  assert.match(system, /Platform: \w+/);
});

test("config.system replaces the built-in prompt, and null sends none", async (t) => {
  const { agent } = await setup(t, [], { system: "Be brief." });
  assert.equal(agent.system(), "Be brief.");
  const { agent: none, provider } = await setup(t, [{ say: "ok" }], { system: null });
  await none.turn("hi", nullSink, approval());
  assert.equal(provider.parsedRequests()[0]!.system, null);
});

test("a template that cannot render fails construction", async (t) => {
  const workspace = await tempDir(t);
  assert.throws(
    () => new CodingAgent(new ScriptedProvider([]), { workspace, systemTemplate: "Hi {{enviroment}}" }),
    (err: unknown) => err instanceof CodingAgentError && err.code === "prompt_render_failed" && /enviroment/.test(err.message),
  );
});

test("stamps the environment report at the first turn and reuses it byte for byte on resume", async (t) => {
  const { agent, provider, config } = await setup(t, [{ say: "one" }, { say: "two" }]);
  await agent.turn("first", nullSink, approval());
  const stamped = agent.session.environment!;
  assert.ok(stamped.includes("Date: 2026-03-04"));
  const later = { ...config, now: () => new Date("2030-01-01T00:00:00Z") };
  const resumed = CodingAgent.fromSession(provider, later, JSON.parse(JSON.stringify(agent.session)));
  await resumed.turn("second", nullSink, approval());
  const [first, second] = provider.parsedRequests();
  assert.equal(resumed.session.environment, stamped);
  assert.equal(second!.system, first!.system);
});

test("a session without an environment report gets the config's render once and keeps it", async (t) => {
  const { agent, provider, config } = await setup(t, [{ say: "a" }, { say: "b" }]);
  const bare = { ...agent.session, messages: [] };
  delete bare.environment;
  const adopted = CodingAgent.fromSession(provider, config, bare);
  await adopted.turn("go", nullSink, approval());
  const env = adopted.session.environment;
  assert.ok(env && env.includes("Date: 2026-03-04"));
  await adopted.turn("again", nullSink, approval());
  assert.equal(adopted.session.environment, env);
});

test("runs a step's tool calls in order and commits at every boundary", async (t) => {
  const { agent, workspace } = await setup(t, [
    { say: "working", calls: [{ call: "append_line", input: { tag: "a" } }, { call: "append_line", input: { tag: "b" } }] },
    { call: "append_line", input: { tag: "c" } },
    { say: "done" },
  ]);
  const commits: Array<{ boundary: string; messages: number }> = [];
  agent.setCommitHook(async (c: Commit) => void commits.push({ boundary: c.boundary, messages: c.session.messages.length }));
  const out = await agent.turn("go", nullSink, approval());
  assert.deepEqual(await lines(workspace), ["a", "b", "c"]);
  assert.deepEqual(commits.map((c) => c.boundary), ["input", "intent", "started", "result", "started", "result", "intent", "started", "result", "intent"]);
  assert.deepEqual(out.message, { role: "assistant", content: [{ type: "text", text: "done" }] });
  assert.equal(out.steps, 3);
  assert.equal(out.stopReason, "end_turn");
});

test("clears the commit hook when a turn ends", async (t) => {
  const { agent } = await setup(t, [{ say: "one" }, { say: "two" }]);
  let calls = 0;
  agent.setCommitHook(async () => void calls++);
  await agent.turn("a", nullSink, approval());
  const afterFirst = calls;
  await agent.turn("b", nullSink, approval());
  assert.equal(calls, afterFirst);
});

test("a commit hook that throws fails the turn", async (t) => {
  const { agent, workspace } = await setup(t, [{ call: "append_line", input: { tag: "x" } }]);
  agent.setCommitHook(async (c) => {
    if (c.boundary === "intent") throw new Error("disk full");
  });
  await assert.rejects(agent.turn("go", nullSink, approval()), (err: unknown) =>
    err instanceof CodingAgentError && err.code === "commit_failed" && /intent.*disk full/.test(err.message));
  assert.deepEqual(await lines(workspace), [], "the intent was not durable, so its call must not run");
});

test("a tool that throws becomes an error result the model reads", async (t) => {
  const { agent } = await setup(t, [{ call: "explode" }, { say: "ok" }]);
  await agent.turn("go", nullSink, approval());
  assert.deepEqual(resultsOf(agent.session.messages), [{ type: "tool_result", callId: "call_0_0", content: "explode failed: kaboom", isError: true }]);
});

test("an unknown tool name is an error result naming the available tools", async (t) => {
  const { agent } = await setup(t, [{ call: "grpe" }, { say: "ok" }]);
  await agent.turn("go", nullSink, approval());
  const [result] = resultsOf(agent.session.messages);
  assert.equal(result!.content, 'Unknown tool "grpe". Available: append_line, wait, explode');
  assert.equal(result!.isError, true);
});

test("a denied call is not run and its result says which rule denied it", async (t) => {
  const { agent, workspace } = await setup(t, [{ call: "append_line", input: { tag: "no" } }, { say: "ok" }]);
  const denyAll = new RecordingApproval(() => ({ decision: "deny", rule: "rule 2 (policy.yaml:7)", reason: "no writes" }));
  const sink = new MemorySink();
  await agent.turn("go", sink, denyAll);
  assert.deepEqual(await lines(workspace), []);
  assert.equal(resultsOf(agent.session.messages)[0]!.content, "denied by rule 2 (policy.yaml:7): no writes");
  assert.deepEqual(denyAll.requests[0], {
    callId: "call_0_0", tool: "append_line", effect: "write", input: { tag: "no" }, workspace, paths: [LINES_FILE],
  });
  assert.ok(sink.events.some((e) => e.type === "approval" && e.decision.decision === "deny"));
});

test("stops at maxTurnSteps with a clear error and a session that resumes", async (t) => {
  const loop: ScriptStep[] = [1, 2, 3].map((n) => ({ call: "append_line", input: { tag: `s${n}` } }));
  const { agent, workspace } = await setup(t, [...loop, { say: "finished" }], { maxTurnSteps: 2 });
  await assert.rejects(agent.turn("go", nullSink, approval()), (err: unknown) => err instanceof CodingAgentError && err.code === "step_cap");
  assert.deepEqual(unansweredCalls(agent.session.messages), []);
  const out = await agent.retryTurnWithCancel(nullSink, approval(), new AbortController().signal);
  assert.equal(out.message.content[0]!.type, "text");
  assert.deepEqual(await lines(workspace), ["s1", "s2", "s3"]);
});

test("revives unanswered started calls with a synthetic result and never runs them again", async (t) => {
  const { agent, provider, config, workspace } = await setup(t, [{ call: "append_line", input: { tag: "once" } }, { say: "done" }]);
  // A history cut after the call started: it is committed, started, and has no result.
  const session = agent.session;
  session.messages = [
    { role: "user", content: [{ type: "text", text: "go" }] },
    { role: "assistant", content: [{ type: "tool_call", id: "call_0_0", name: "append_line", input: { tag: "once" } }] },
  ];
  session.calls = { call_0_0: { state: "started", at: "2026-03-04T05:06:07.000Z" } };
  const sink = new MemorySink();
  const resumed = CodingAgent.fromSession(provider, config, session);
  await resumed.retryTurnWithCancel(sink, approval(), new AbortController().signal);
  assert.deepEqual(await lines(workspace), [], "the committed call was not executed behind the model's back");
  assert.deepEqual(resultsOf(resumed.session.messages), [{ type: "tool_result", callId: "call_0_0", content: INTERRUPTED_RESULT, isError: true }]);
  const sent = provider.parsedRequests()[0]!;
  assert.deepEqual(unansweredCalls(sent.messages), []);
  assert.ok(sink.events.some((e) => e.type === "revived" && e.callIds[0] === "call_0_0"));
});

test("cancel during a long tool ends the turn with a cancellation error and a resumable session", async (t) => {
  const { agent } = await setup(t, [{ calls: [{ call: "wait", input: { ms: 60_000 } }, { call: "append_line", input: { tag: "never" } }] }, { say: "ok" }]);
  const controller = new AbortController();
  const recording = approval();
  const started = Date.now();
  const turn = agent.turnWithCancel("go", nullSink, recording, controller.signal);
  setTimeout(() => controller.abort(), 100);
  await assert.rejects(turn, (err: unknown) => err instanceof CancelledError && err.code === "cancelled");
  assert.ok(Date.now() - started < 5_000, "the tool was stopped, not waited out");
  assert.equal(recording.requests.length, 1, "no approval was asked after the cancel");
  assert.deepEqual(unansweredCalls(agent.session.messages), []);
  const results = resultsOf(agent.session.messages);
  assert.match(String(results[0]!.content), /^cancelled/);
  assert.match(String(results[1]!.content), /^not run/);
  const out = await agent.turn("carry on", nullSink, approval());
  assert.equal(out.stopReason, "end_turn");
});

test("cancel mid-stream ends the turn with a cancellation error", async (t) => {
  const { agent } = await setup(t, [{ say: "a long answer that streams slowly, chunk by chunk", chunkDelayMs: 200 }]);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(agent.turnWithCancel("go", nullSink, approval(), controller.signal), CancelledError);
  assert.equal(agent.session.messages.length, 1, "only the input was committed");
});

test("a typed abort reason (a runner's timeout) is the error the turn ends with", async (t) => {
  const { agent } = await setup(t, [{ call: "wait", input: { ms: 60_000 } }]);
  const controller = new AbortController();
  setTimeout(() => controller.abort(new CodingAgentError("timeout", "the task's timeout of 1s passed")), 50);
  await assert.rejects(agent.turnWithCancel("go", nullSink, approval(), controller.signal), (err: unknown) =>
    err instanceof CodingAgentError && err.code === "timeout");
});

test("a bug thrown while the stream is read (by a sink here, or a provider's stray TypeError) is internal, not a provider outage", async (t) => {
  const { agent } = await setup(t, [{ say: "hello" }]);
  const sink = { emit: async (event: { type: string }) => {
    if (event.type === "text") throw new TypeError("Cannot read properties of undefined (reading 'delta')");
  } };
  await assert.rejects(agent.turnWithCancel("go", sink, approval(), new AbortController().signal), (err: unknown) =>
    err instanceof RhemaError && !(err instanceof ProviderError) && err.code === "internal" && /reading 'delta'/.test(err.message));
  const strayProvider = { id: "stray:model", async *stream(): AsyncIterable<never> { throw new TypeError("fetch is not a function"); } };
  const { config } = await setup(t, []);
  await assert.rejects(new CodingAgent(strayProvider, config).turnWithCancel("go", nullSink, approval(), new AbortController().signal), (err: unknown) =>
    err instanceof RhemaError && err.code === "internal");
});

test("retryTurnWithCancel re-sends the failed request byte for byte", async (t) => {
  const { agent, provider } = await setup(t, [
    { call: "append_line", input: { tag: "a" } },
    { say: "done", fail: { status: 529, message: "overloaded", times: 1 } },
  ]);
  await assert.rejects(agent.turn("go", nullSink, approval()), (err: unknown) => err instanceof ProviderError && err.status === 529);
  const out = await agent.retryTurnWithCancel(nullSink, approval(), new AbortController().signal);
  assert.equal(out.message.content[0]!.type === "text" && out.message.content[0]!.text, "done");
  const [, failed, retried] = provider.requests;
  assert.equal(provider.requests.length, 3);
  assert.equal(retried, failed);
});

test("retry after a resume from disk sends the same bytes as the failed request", async (t) => {
  const { agent, provider, config, workspace } = await setup(t, [
    { call: "append_line", input: { tag: "a" } },
    { say: "done", fail: { times: 1 } },
  ]);
  await assert.rejects(agent.turn("go", nullSink, approval()));
  const path = join(workspace, "..", `${ids}-session.json`);
  await agent.saveSessionTo(path);
  t.after(() => import("node:fs/promises").then((fs) => fs.rm(path, { force: true })));
  const resumed = CodingAgent.fromSession(provider, config, await CodingAgent.loadSessionFrom(path));
  await resumed.retryTurnWithCancel(nullSink, approval(), new AbortController().signal);
  assert.equal(provider.requests[2], provider.requests[1]);
});

test("retry of a finished conversation is a clear error", async (t) => {
  const { agent } = await setup(t, [{ say: "done" }]);
  await agent.turn("go", nullSink, approval());
  await assert.rejects(agent.retryTurnWithCancel(nullSink, approval(), new AbortController().signal), (err: unknown) =>
    err instanceof CodingAgentError && err.code === "nothing_to_retry");
});

test("turnMessage accepts image blocks beside text and refuses other media types", async (t) => {
  const { agent, provider } = await setup(t, [{ say: "I see it" }]);
  const png = { type: "image" as const, mediaType: "image/png" as const, data: "iVBORw0KGgo=" };
  await agent.turnMessage({ role: "user", content: [{ type: "text", text: "look" }, png] }, nullSink, approval());
  assert.deepEqual(provider.parsedRequests()[0]!.messages[0]!.content[1], png);
  const bmp = { type: "image", mediaType: "image/bmp", data: "Qk0=" } as never;
  await assert.rejects(agent.turnMessage({ role: "user", content: [bmp] }, nullSink, approval()), (err: unknown) =>
    err instanceof CodingAgentError && err.code === "invalid_input" && /image\/bmp/.test(err.message));
});

test("a steering nudge is appended as user text at the next step boundary and committed", async (t) => {
  const { agent, provider } = await setup(t, [{ call: "append_line", input: { tag: "a" } }, { say: "ok" }]);
  const boundaries: string[] = [];
  agent.setCommitHook(async (c) => {
    boundaries.push(c.boundary);
    if (c.boundary === "intent" && boundaries.length === 2) agent.steer("Two steps left: wrap up.");
  });
  await agent.turn("go", nullSink, approval());
  assert.deepEqual(boundaries, ["input", "intent", "started", "result", "input", "intent"]);
  const second = provider.parsedRequests()[1]!;
  const last = second.messages[second.messages.length - 1]!;
  assert.equal(last.role, "user");
  assert.deepEqual(last.content[1], { type: "text", text: "Two steps left: wrap up." });
});

test("counts requests and the provider's cache figures in the transcript stats", async (t) => {
  const big = "x".repeat(8_000);
  const { agent } = await setup(t, [{ call: "append_line", input: { tag: big } }, { call: "append_line", input: { tag: "b" } }, { say: "ok" }]);
  await agent.turn("go", nullSink, approval());
  const stats = agent.transcriptStats()!;
  assert.equal(stats.requests, 3);
  assert.ok(stats.cacheReadTokens > 0, "later requests read the cached prefix");
  assert.ok(stats.cacheWriteTokens > 0);
  assert.equal(stats.cacheHitRate, stats.cacheReadTokens / (stats.inputTokens + stats.cacheReadTokens + stats.cacheWriteTokens));
  const { agent: off } = await setup(t, [{ say: "ok" }], { transcript: false });
  await off.turn("go", nullSink, approval());
  assert.equal(off.transcriptStats(), null);
});

test("stats carried from a save keep reading as one run; reset zeroes them", async (t) => {
  const { agent, provider, config } = await setup(t, [{ say: "a" }, { say: "b" }]);
  await agent.turn("one", nullSink, approval());
  const saved = agent.transcriptStats()!;
  const resumed = CodingAgent.fromSession(provider, config, structuredClone(agent.session));
  resumed.carryTranscriptStats(saved);
  await resumed.turn("two", nullSink, approval());
  assert.equal(resumed.transcriptStats()!.requests, 2);
  resumed.resetTranscriptStats();
  assert.equal(resumed.transcriptStats()!.requests, 0);
});

test("sections on resume are adopted when they tile the log and dropped otherwise", async (t) => {
  const steps: ScriptStep[] = [...Array.from({ length: 6 }, (_, k) => ({ call: "append_line", input: { tag: `${k}-${"y".repeat(400)}` } })), { say: "end" }];
  const { agent, provider, config } = await setup(t, steps, { transcript: { blockTokens: 200 } });
  await agent.turn("go", nullSink, approval());
  const sections = agent.transcriptSections();
  assert.ok(sections.length >= 2, `expected sections, got ${sections.length}`);
  assert.ok(sections.every((s) => s.summary === null), "a fresh tiling has no summaries");
  // A summary is what only a save can carry: a rebuild from the log never writes one.
  const saved = sections.map((s, k) => ({ ...s, summary: `summary of section ${k}` }));
  const resume = async (session: typeof agent.session, adopt: typeof sections) => {
    const resumed = CodingAgent.fromSession(provider, config, session);
    resumed.adoptTranscriptSections(adopt);
    await resumed.turn("more", nullSink, approval());
    return resumed;
  };

  const good = await resume(structuredClone(agent.session), saved);
  assert.deepEqual(good.transcriptSections().slice(0, saved.length), saved, "saved sections that tile the log survive the resume");

  const forged = await resume(structuredClone(agent.session), saved.map((s) => ({ ...s, hash: "0".repeat(32) })));
  assert.deepEqual(forged.transcriptSections().slice(0, sections.length), sections, "sections whose hashes do not match are rebuilt from the log");

  const edited = structuredClone(agent.session);
  edited.messages[0] = { role: "user", content: [{ type: "text", text: "go, edited" }] };
  const changed = await resume(edited, saved);
  const rebuilt = changed.transcriptSections();
  assert.ok(rebuilt.length >= 2 && rebuilt.every((s) => s.summary === null), "sections of a log that changed are dropped and rebuilt");
  assert.ok(sectionsTile(rebuilt, changed.session.messages), "the rebuilt sections tile the changed log");
  assert.notEqual(rebuilt[0]!.hash, saved[0]!.hash);
});

test("saves the session as pretty JSON with mode 0600", async (t) => {
  const { agent, workspace } = await setup(t, [{ say: "ok" }]);
  await agent.turn("go", nullSink, approval());
  const path = join(workspace, "state", "session.json");
  await agent.saveSessionTo(path);
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.equal((await stat(join(workspace, "state"))).mode & 0o777, 0o700);
  const text = await readFile(path, "utf8");
  assert.ok(text.startsWith(`{\n  "version": ${SESSION_VERSION},`));
  const loaded = await CodingAgent.loadSessionFrom(path);
  assert.deepEqual(loaded.messages, agent.session.messages);
});

test("a truncated, non-JSON or unknown-version session file is a clear error naming the file", async (t) => {
  const { agent, workspace } = await setup(t, [{ say: "ok" }]);
  await agent.turn("go", nullSink, approval());
  const good = JSON.stringify(agent.session, null, 2);
  const cases: Array<[string, string, RegExp]> = [
    ["truncated.json", good.slice(0, good.length / 2), /truncated or corrupt/],
    ["garbage.json", "hello, world", /not JSON/],
    ["empty.json", "", /empty/],
    ["future.json", JSON.stringify({ ...agent.session, version: 99 }), /unsupported session version 99/],
    ["foreign.json", JSON.stringify({ version: 1, id: "x", createdAt: "now", messages: [{ role: "system" }] }), /messages\.0\.role/],
  ];
  for (const [name, text, pattern] of cases) {
    const path = join(workspace, name);
    await writeFile(path, text);
    await assert.rejects(CodingAgent.loadSessionFrom(path), (err: unknown) =>
      err instanceof SessionFileError && err.message.startsWith(path) && pattern.test(err.message), name);
  }
  await assert.rejects(CodingAgent.loadSessionFrom(join(workspace, "missing.json")), /missing\.json: no such file/);
});

test("a second turn while one runs is refused", async (t) => {
  const { agent } = await setup(t, [{ say: "slow answer, streamed in pieces", chunkDelayMs: 50 }, { say: "x" }]);
  const first = agent.turn("one", nullSink, approval());
  await assert.rejects(agent.turn("two", nullSink, approval()), (err: unknown) => err instanceof CodingAgentError && err.code === "turn_in_progress");
  await first;
});

test("awaits the commit hook before going on: a slow intent commit delays the call", async (t) => {
  const order: string[] = [];
  const { agent } = await setup(t, [{ call: "append_line", input: { tag: "a" } }, { say: "ok" }], {
    tools: [appendLineTool({ onStart: () => order.push("tool started") })],
  });
  agent.setCommitHook(async (c) => {
    if (c.boundary !== "intent" || order.length > 0) return;
    order.push("intent commit started");
    await new Promise((r) => setTimeout(r, 50));
    order.push("intent commit done");
  });
  await agent.turn("go", nullSink, approval());
  assert.deepEqual(order, ["intent commit started", "intent commit done", "tool started"]);
});

test("filterToolOutput rewrites tool output before the model and the session see it", async (t) => {
  const { agent, provider } = await setup(t, [{ call: "append_line", input: { tag: "a" } }, { say: "ok" }], {
    filterToolOutput: (text) => text.replace("appended", "[filtered]"),
  });
  await agent.turn("go", nullSink, approval());
  assert.equal(resultsOf(agent.session.messages)[0]!.content, "[filtered] a");
  assert.ok(provider.requests[1]!.includes("[filtered] a"));
});

test("the built-in shell starts from config.env with secrets scrubbed, and from an empty environment by default", async (t) => {
  const command = 'echo "plain=${RHEMA_T_PLAIN:-unset} key=${RHEMA_T_API_KEY:-unset} kept=${RHEMA_T_TOKEN:-unset} path=$PATH"';
  const script: ScriptStep[] = [{ call: "shell", input: { command } }, { say: "ok" }];
  const shellOutput = async (extra: Partial<CodingAgentConfig>): Promise<unknown> => {
    const { agent } = await setup(t, script, { builtinTools: true, tools: [], ...extra });
    await agent.turn("go", nullSink, approval());
    return resultsOf(agent.session.messages)[0]!.content;
  };
  const env = { RHEMA_T_PLAIN: "p", RHEMA_T_API_KEY: "sk-1", RHEMA_T_TOKEN: "tok-2", PATH: "/usr/bin:/bin" };
  assert.equal(await shellOutput({ env, allowEnv: ["RHEMA_T_TOKEN"] }), "plain=p key=unset kept=tok-2 path=/usr/bin:/bin\n[exit code 0]");
  process.env.RHEMA_T_PLAIN = "ambient";
  t.after(() => delete process.env.RHEMA_T_PLAIN);
  const bare = await shellOutput({});
  assert.match(String(bare), /^plain=unset key=unset kept=unset path=\S*\/bin\S*\n\[exit code 0\]$/);
});

test("a pricer puts each request's dollars in its usage event and the session's stats", async (t) => {
  const { agent } = await setup(t, [{ say: "done" }], { price: () => ({ priced: true, usd: 0.125 }) });
  const sink = new MemorySink();
  await agent.turn("go", sink, approval());
  const usage = sink.events.filter((e) => e.type === "usage");
  assert.equal(usage.length, 1);
  assert.equal(usage[0]!.type === "usage" && usage[0]!.costUsd, 0.125);
  assert.equal(agent.transcriptStats()?.costUsd, 0.125);
});

test("a write call's fingerprint of its own path goes through filterCommitted: a secret-named path is committed redacted", async (t) => {
  const secret = "s3cr3t-VALUE";
  const filter = (text: string) => text.replaceAll(secret, "[redacted:K]");
  const { agent, workspace } = await setup(t, [{ call: "write_file", input: { path: "notes.txt", content: "x" } }, { say: "done" }], {
    filterCommitted: filter, builtinTools: true, tools: [],
  });
  // The planned path holds no secret; the file beside it, that a walk would meet, does.
  await writeFile(join(workspace, `${secret}.txt`), "a file named with the secret\n");
  const started: unknown[] = [];
  agent.setCommitHook(async (c: Commit) => {
    if (c.boundary === "started") started.push(structuredClone(Object.values(c.session.calls ?? {}).find((r) => r.state === "started")));
  });
  await agent.turn("go", nullSink, approval());
  assert.deepEqual(started, [{ state: "started", at: FIXED_NOW().toISOString(), fingerprint: { files: {}, capped: false, paths: ["notes.txt"] } }], "only the planned path, not the walk");
  // The model's path is committed redacted before the call plans; its canonical form is not:
  // through a link, the planned path names the secret-named folder the link points to.
  const linked = await setup(t, [{ call: "write_file", input: { path: "notes/a.txt", content: "y" } }, { say: "done" }], { filterCommitted: filter, builtinTools: true, tools: [] });
  await mkdir(join(linked.workspace, `${secret}-dir`));
  await symlink(`${secret}-dir`, join(linked.workspace, "notes"));
  const commits: string[] = [];
  linked.agent.setCommitHook(async (c: Commit) => void commits.push(JSON.stringify(c.session)));
  await linked.agent.turn("go", nullSink, approval());
  for (const json of commits) assert.ok(!json.includes(secret), json);
  assert.ok(commits.some((json) => json.includes('"paths":["[redacted:K]-dir/a.txt"]')), "the planned path is committed redacted");
});

test("filterCommitted rewrites what the model wrote at the commit boundary: in memory and in every commit alike, the calls run as committed, the next request sees it rewritten", async (t) => {
  const secret = "s3cr3t-VALUE";
  const filter = (text: string) => text.replaceAll(secret, "[redacted:K]");
  const script: ScriptStep[] = [
    { say: `The key is ${secret}, as JSON ${JSON.stringify({ k: secret })}`, call: "append_line", input: { tag: `${secret}-tag`, nested: [secret] } },
    { say: `done with ${secret}` },
  ];
  // append_line as an exec tool: its fingerprint walks the workspace, and so meets the secret-named file.
  const { agent, provider, workspace, config } = await setup(t, script, { filterCommitted: filter, tools: [{ ...appendLineTool(), effect: "exec" }] });
  await writeFile(join(workspace, `${secret}.txt`), "a file named with the secret\n");
  const commits: Array<{ boundary: string; json: string; session: unknown }> = [];
  agent.setCommitHook(async (c: Commit) => void commits.push({ boundary: c.boundary, json: JSON.stringify(c.session), session: structuredClone(c.session) }));
  const output = await agent.turn(`use ${secret}`, nullSink, approval());

  assert.ok(commits.length >= 5 && commits.some((c) => c.boundary === "started"));
  for (const c of commits) assert.ok(!c.json.includes(secret), `the ${c.boundary} commit holds the secret: ${c.json}`);
  assert.ok(commits.find((c) => c.boundary === "started")!.json.includes("[redacted:K].txt"), "the started call's fingerprint names the file redacted");
  assert.ok(!JSON.stringify(agent.session).includes(secret), "the session in memory holds none either");
  assert.deepEqual(await lines(workspace), ["[redacted:K]-tag"], "the call ran as committed (a resume would run the same)");
  assert.equal(textOf(output.message), "done with [redacted:K]", "the turn returns the message as committed");
  const requests = provider.requests;
  assert.equal(requests.length, 2);
  assert.ok(!requests[0]!.includes(secret), "the input was rewritten before the first request");
  assert.ok(!requests[1]!.includes(secret) && requests[1]!.includes("The key is [redacted:K], as JSON"), "the next request sees the model's text rewritten");

  // Resumed from the boundary before the second request: the same request, byte for byte.
  const beforeSecond = commits.filter((c) => c.boundary === "result").at(-1)!.session as Session;
  const resumedProvider = new ScriptedProvider(script, { name: "test" });
  const resumed = CodingAgent.fromSession(resumedProvider, { ...config, filterCommitted: filter }, structuredClone(beforeSecond));
  await resumed.retryTurnWithCancel(nullSink, approval(), new AbortController().signal);
  assert.equal(resumedProvider.requests[0], requests[1]);

  // Resumed from the started boundary (a kill while the call ran): the file named with the
  // secret did not change, and the interrupted call's note does not say it did.
  const started = commits.find((c) => c.boundary === "started")!.session as Session;
  const revived = CodingAgent.fromSession(new ScriptedProvider(script, { name: "test" }), { ...config, filterCommitted: filter }, structuredClone(started));
  await revived.retryTurnWithCancel(nullSink, approval(), new AbortController().signal);
  const note = String(resultsOf(revived.session.messages)[0]!.content);
  assert.match(note, /^interrupted/);
  assert.equal(note, `${INTERRUPTED_RESULT}; since it started: created lines.txt`, "only what changed is named");
});
