/**
 * Kill tests: a child process runs a real turn (scripted provider, a tool that appends a line
 * to a file, the checkpoint store as commit hook); the test SIGKILLs it at each kind of point,
 * then loads the checkpoint, resumes, and checks that nothing ran twice and nothing was lost.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { CodingAgent } from "../src/agent.js";
import { allowAll } from "../src/core/approval.js";
import { CheckpointStore, JOURNAL_FILE, SESSION_FILE } from "../src/store/checkpoint-store.js";
import { SessionFileError } from "../src/core/errors.js";
import { writeFile } from "node:fs/promises";
import { INTERRUPTED_RESULT, conversationState } from "../src/core/conversation.js";
import { nullSink } from "../src/core/events.js";
import { toolCallsOf, unansweredCalls, type Message, type ToolResultBlock } from "../src/core/messages.js";
import { loadSession } from "../src/store/session-file.js";
import { ScriptedProvider } from "../src/providers/scripted.js";
import { compiled } from "./support/paths.js";
import { tempDir } from "./support/temp-dir.js";
import { KILL_INPUT, KILL_SCRIPT } from "./support/kill-script.js";
import { LINES_FILE, appendLineTool } from "./support/test-tools.js";

interface KillPoint { name: string; mark: string; detail?: string; occurrence?: number }

/** Runs the child until `point` is reached, kills it with SIGKILL, returns what it said. */
async function runAndKill(workspace: string, checkpoints: string, point: KillPoint | null, foldMinBytes = 512): Promise<{ environment: string; killed: boolean }> {
  const args = [compiled("test/support/kill-child.js"), workspace, checkpoints, String(foldMinBytes)];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  let environment = "";
  let seen = 0;
  let killed = false;
  for await (const line of createInterface({ input: child.stdout! })) {
    const [, mark, ...rest] = line.split(" ");
    const detail = rest.join(" ");
    if (mark === "environment") environment = JSON.parse(detail) as string;
    if (point && mark === point.mark && (point.detail === undefined || point.detail === detail) && ++seen === (point.occurrence ?? 1)) {
      child.kill("SIGKILL");
      killed = true;
      break;
    }
  }
  const code = await new Promise<number | null>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once("exit", resolve)));
  if (!killed) assert.equal(code, 0, "the child turn finished cleanly");
  return { environment, killed };
}

/** Every file of the checkpoint parses: the snapshot whole, the journal up to a torn last line. */
async function assertCheckpointParses(dir: string): Promise<void> {
  await loadSession(join(dir, SESSION_FILE));
  const journal = await readFile(join(dir, JOURNAL_FILE), "utf8").catch(() => "");
  for (const line of journal.split("\n").slice(0, -1)) JSON.parse(line);
}

async function resume(workspace: string, checkpoints: string) {
  const store = new CheckpointStore(checkpoints);
  const session = await store.load();
  assert.ok(session, "a checkpoint was written before the kill");
  const provider = new ScriptedProvider(KILL_SCRIPT);
  const agent = CodingAgent.fromSession(provider, { workspace, builtinTools: false, tools: [appendLineTool()] }, session);
  agent.setCommitHook(store.hook);
  if (conversationState(session.messages).kind !== "ended") await agent.retryTurnWithCancel(nullSink, allowAll, new AbortController().signal);
  await store.close();
  const reloaded = await new CheckpointStore(checkpoints).load();
  return { agent, provider, reloaded: reloaded! };
}

const points: KillPoint[] = [
  { name: "after the input boundary", mark: "after-input" },
  { name: "mid-stream", mark: "stream-text" },
  { name: "after the intent", mark: "after-intent" },
  { name: "after a call started, before it ran", mark: "after-started", occurrence: 3 },
  { name: "during a tool, after its side effect", mark: "tool-appended", detail: "b" },
  { name: "during a tool, before its side effect", mark: "tool-start", detail: "d" },
  { name: "after a result", mark: "after-result", occurrence: 2 },
  { name: "after the last intent", mark: "after-intent", occurrence: 4 },
];

const uninterrupted = ["a", "b", "c", "d"];

for (const point of points) {
  test(`resumes after a kill ${point.name}`, async (t) => {
    const root = await tempDir(t);
    const workspace = join(root, "ws");
    const checkpoints = join(root, "checkpoint");
    await mkdir(workspace);
    const { environment, killed } = await runAndKill(workspace, checkpoints, point);
    assert.ok(killed, `the child reached ${point.mark}`);
    await assertCheckpointParses(checkpoints);

    const { agent, provider, reloaded } = await resume(workspace, checkpoints);
    const lines = (await readFile(join(workspace, LINES_FILE), "utf8").catch(() => "")).split("\n").filter(Boolean);
    assert.equal(new Set(lines).size, lines.length, `no call ran twice: ${lines.join(",")}`);

    const calls = agent.session.messages.flatMap(toolCallsOf);
    const results = new Map(agent.session.messages.flatMap((m) => m.content.filter((b): b is ToolResultBlock => b.type === "tool_result")).map((r) => [r.callId, r]));
    for (const call of calls) {
      const tag = (call.input as { tag: string }).tag;
      const result = results.get(call.id);
      assert.ok(result, `call ${call.id} has a result`);
      if (String(result.content).startsWith(INTERRUPTED_RESULT)) assert.ok(lines.filter((l) => l === tag).length <= 1, `interrupted ${tag} was not re-run`);
      else assert.equal(lines.filter((l) => l === tag).length, 1, `completed ${tag} appears exactly once`);
    }
    const interrupted = [...results.values()].filter((r) => String(r.content).startsWith(INTERRUPTED_RESULT));
    if (interrupted.length === 0) assert.deepEqual(lines, uninterrupted, "with no call cut, the result equals an uninterrupted run's");

    const firstResumed = provider.parsedRequests()[0];
    if (firstResumed) assert.deepEqual(unansweredCalls(firstResumed.messages), [], "the next request holds no unanswered call");
    assert.equal(agent.session.environment, environment, "the environment report is byte-identical to the first run's");
    assert.ok(firstResumed === undefined || firstResumed.system!.endsWith(environment));
    assert.equal(conversationState(reloaded.messages).kind, "ended");
    assert.deepEqual(reloaded.messages, agent.session.messages, "the checkpoint holds the finished conversation");
  });
}

test("an uninterrupted child run appends every tag once", async (t) => {
  const root = await tempDir(t);
  const workspace = join(root, "ws");
  await mkdir(workspace);
  await runAndKill(workspace, join(root, "checkpoint"), null);
  assert.deepEqual((await readFile(join(workspace, LINES_FILE), "utf8")).split("\n").filter(Boolean), uninterrupted);
});

const resultTexts = (messages: Message[]) =>
  messages.flatMap((m) => m.content.filter((b): b is ToolResultBlock => b.type === "tool_result").map((r) => String(r.content)));

test("a kill after the intent, before the call started: on resume the call runs once and the tags equal an uninterrupted run's", async (t) => {
  const root = await tempDir(t);
  const workspace = join(root, "ws");
  const checkpoints = join(root, "checkpoint");
  await mkdir(workspace);
  // The intent of the step with b and c: neither has started.
  assert.ok((await runAndKill(workspace, checkpoints, { name: "", mark: "after-intent", occurrence: 2 })).killed);
  assert.deepEqual(await tagLines(workspace), ["a"]);
  const { agent } = await resume(workspace, checkpoints);
  assert.deepEqual(await tagLines(workspace), uninterrupted);
  assert.ok(!resultTexts(agent.session.messages).some((text) => text.startsWith(INTERRUPTED_RESULT)), "no call was closed as interrupted");
  assert.deepEqual(resultTexts(agent.session.messages), ["appended a", "appended b", "appended c", "appended d"]);
});

test("a kill after a call started and made its change: revived, not re-run, its result lists the files it changed", async (t) => {
  const root = await tempDir(t);
  const workspace = join(root, "ws");
  const checkpoints = join(root, "checkpoint");
  await mkdir(workspace);
  assert.ok((await runAndKill(workspace, checkpoints, { name: "", mark: "tool-appended", detail: "b" })).killed);
  const { agent } = await resume(workspace, checkpoints);
  assert.deepEqual(await tagLines(workspace), uninterrupted, "b ran once (before the kill), c and d after the resume");
  assert.deepEqual(resultTexts(agent.session.messages), [
    "appended a",
    `${INTERRUPTED_RESULT}; since it started: modified ${LINES_FILE}`,
    "appended c",
    "appended d",
  ]);
});

test("a journal cut in its middle is an error naming the journal and the missing records, never a silent re-run", async (t) => {
  const root = await tempDir(t);
  const workspace = join(root, "ws");
  const checkpoints = join(root, "checkpoint");
  await mkdir(workspace);
  await runAndKill(workspace, checkpoints, { name: "", mark: "after-result", occurrence: 3 }, 1_000_000);
  const journal = join(checkpoints, JOURNAL_FILE);
  const text = await readFile(journal, "utf8");
  const lines = text.split("\n").filter(Boolean);
  assert.ok(lines.length >= 4, `the journal has records to lose (${lines.length})`);
  await writeFile(journal, text.slice(0, lines[0]!.length + 1 + 10)); // inside line 2
  await assert.rejects(new CheckpointStore(checkpoints).load(), (err: unknown) =>
    err instanceof SessionFileError && err.code === "session_invalid" && err.message.startsWith(journal) &&
    new RegExp(`records 2–${lines.length} are missing`).test(err.message));
});

async function tagLines(workspace: string): Promise<string[]> {
  return (await readFile(join(workspace, LINES_FILE), "utf8").catch(() => "")).split("\n").filter(Boolean);
}

const stateOf = (session: { messages: Message[]; calls?: Record<string, { state: string }> }, tag: string) => {
  const call = session.messages.flatMap(toolCallsOf).find((c) => (c.input as { tag: string }).tag === tag);
  return call ? session.calls?.[call.id]?.state : undefined;
};

test("a kill between a call's started record and its result: the checkpoint file says started, and the resume closes the call without running it", async (t) => {
  const root = await tempDir(t);
  const workspace = join(root, "ws");
  const checkpoints = join(root, "checkpoint");
  await mkdir(workspace);
  assert.ok((await runAndKill(workspace, checkpoints, { name: "", mark: "tool-start", detail: "d" })).killed);
  const saved = (await new CheckpointStore(checkpoints).load())!;
  assert.deepEqual(["a", "b", "c", "d"].map((tag) => stateOf(saved, tag)), ["completed", "completed", "completed", "started"]);
  const { agent, reloaded } = await resume(workspace, checkpoints);
  // The kill lands as d begins: its line may or may not be written, but it is never run again.
  assert.deepEqual((await tagLines(workspace)).filter((tag) => tag !== "d"), ["a", "b", "c"]);
  assert.ok((await tagLines(workspace)).filter((tag) => tag === "d").length <= 1, "d did not run again");
  assert.ok(resultTexts(agent.session.messages)[3]!.startsWith(INTERRUPTED_RESULT));
  assert.deepEqual(["a", "b", "c", "d"].map((tag) => stateOf(reloaded, tag)), ["completed", "completed", "completed", "error"]);
});

test("a kill after the intent: the checkpoint file says pending, and the resume runs the calls once", async (t) => {
  const root = await tempDir(t);
  const workspace = join(root, "ws");
  const checkpoints = join(root, "checkpoint");
  await mkdir(workspace);
  assert.ok((await runAndKill(workspace, checkpoints, { name: "", mark: "after-intent", occurrence: 2 })).killed);
  const saved = (await new CheckpointStore(checkpoints).load())!;
  assert.deepEqual(["a", "b", "c"].map((tag) => stateOf(saved, tag)), ["completed", "pending", "pending"]);
  const { reloaded } = await resume(workspace, checkpoints);
  assert.deepEqual(await tagLines(workspace), uninterrupted);
  assert.deepEqual(["a", "b", "c", "d"].map((tag) => stateOf(reloaded, tag)), ["completed", "completed", "completed", "completed"]);
});

/** The requests of the kill script's turn run without a kill, in `workspace` (emptied afterwards). */
async function uninterruptedRequests(workspace: string, checkpoints: string): Promise<string[]> {
  const store = new CheckpointStore(checkpoints);
  const provider = new ScriptedProvider(KILL_SCRIPT);
  const agent = new CodingAgent(provider, { workspace, builtinTools: false, tools: [appendLineTool()] });
  agent.setCommitHook(store.hook);
  await agent.turn(KILL_INPUT, nullSink, allowAll);
  await store.close();
  await rm(join(workspace, LINES_FILE));
  return provider.requests;
}

for (const point of [
  { name: "after a result", mark: "after-result", occurrence: 2 },
  { name: "after the intent", mark: "after-intent", occurrence: 2 },
]) {
  test(`the requests after a kill ${point.name} and a resume are the uninterrupted run's, byte for byte: call states never reach them`, async (t) => {
    const root = await tempDir(t);
    const workspace = join(root, "ws");
    await mkdir(workspace);
    const expected = await uninterruptedRequests(workspace, join(root, "whole"));
    assert.ok((await runAndKill(workspace, join(root, "checkpoint"), point)).killed);
    const saved = (await new CheckpointStore(join(root, "checkpoint")).load())!;
    assert.ok(Object.keys(saved.calls ?? {}).length > 0, "the checkpoint holds call states");
    const { provider } = await resume(workspace, join(root, "checkpoint"));
    assert.ok(provider.requests.length > 0);
    assert.deepEqual(provider.requests, expected.slice(expected.length - provider.requests.length));
  });
}
