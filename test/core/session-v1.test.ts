/**
 * Version-1 sessions (before call states), from real checkpoints written by rhema at session
 * version 1 (test/fixtures/session-v1/, made by make-fixture.mjs there): they load with their
 * states inferred as version 1 decided, resume to the very conversation and request bytes version 1
 * produced, report the denials version 1 read off their text, and are written back as version 2.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CodingAgent } from "../../src/agent.js";
import type { Approval, Decision } from "../../src/core/approval.js";
import { nullSink } from "../../src/core/events.js";
import type { Message } from "../../src/core/messages.js";
import { SESSION_VERSION, type CallRecord } from "../../src/core/session.js";
import { upgradeSession } from "../../src/core/session-v1.js";
import { ScriptedProvider, type ScriptStep } from "../../src/providers/scripted.js";
import { policyDenials } from "../../src/runner/execute/policy-denials.js";
import { CheckpointStore, SESSION_FILE } from "../../src/store/checkpoint-store.js";
import { loadSession } from "../../src/store/session-file.js";
import { repoRoot } from "../support/paths.js";
import { tempDir } from "../support/temp-dir.js";
import { LINES_FILE, appendLineTool } from "../support/test-tools.js";

const FIXTURES = join(repoRoot, "test", "fixtures", "session-v1");
/** The script and approval make-fixture.mjs played. */
const SCRIPT: ScriptStep[] = [
  { say: "Four at once.", calls: ["a", "x", "y", "z"].map((tag) => ({ call: "append_line", input: { tag } })) },
  { say: "Now b and c.", calls: ["b", "c"].map((tag) => ({ call: "append_line", input: { tag } })) },
  { say: "Done." },
];
const DENY: Record<string, Decision> = {
  x: { decision: "deny", rule: "default (policy.yaml)", reason: "no rule allows append_line on `lines.txt`, and the default is deny" },
  y: { decision: "deny", rule: "rule 2 (policy.yaml:7)", reason: "y: not today" },
  z: { decision: "deny", rule: "default-deny-rm", reason: "never z" },
};
const approval: Approval = { async decide(req) { return DENY[(req.input as { tag: string }).tag] ?? { decision: "allow", rule: "rule 1 (policy.yaml:3)" }; } };

interface Expected { linesAtKill: string; requests: string[]; messages: Message[]; lines: string; policyDenials: unknown }

async function copyFixture(t: { after(fn: () => unknown): void }, name: string) {
  const root = await tempDir(t);
  await mkdir(join(root, "ws"));
  await cp(join(FIXTURES, name), join(root, "checkpoint"), { recursive: true });
  const expected = JSON.parse(await readFile(join(FIXTURES, name, "expected.json"), "utf8")) as Expected;
  await writeFile(join(root, "ws", LINES_FILE), expected.linesAtKill);
  return { root, workspace: join(root, "ws"), checkpoint: join(root, "checkpoint"), expected };
}

const states = (calls: Record<string, CallRecord> | undefined) => Object.fromEntries(Object.entries(calls ?? {}).map(([id, r]) => [id, r.state]));
const FIRST_STEP = { call_0_0: "completed", call_0_1: "error", call_0_2: "error", call_0_3: "error" };

for (const { name, open } of [
  { name: "intent", open: { call_1_0: "pending", call_1_1: "pending" } },
  { name: "started", open: { call_1_0: "started", call_1_1: "pending" } },
]) {
  test(`a version-1 checkpoint (${name}) loads with its states inferred, resumes to version 1's conversation and request bytes, and reports its denials`, async (t) => {
    const { workspace, checkpoint, expected } = await copyFixture(t, name);
    assert.equal(JSON.parse(await readFile(join(checkpoint, SESSION_FILE), "utf8")).version, 1, "the fixture is a version-1 file");
    const store = new CheckpointStore(checkpoint);
    const session = (await store.load())!;
    assert.equal(session.version, SESSION_VERSION);
    assert.deepEqual(states(session.calls), { ...FIRST_STEP, ...open });
    if (name === "started") assert.ok((session.calls!["call_1_0"] as { fingerprint?: unknown }).fingerprint, "the started call's fingerprint is back on its record");

    const provider = new ScriptedProvider(SCRIPT);
    const config = { workspace, builtinTools: false, tools: [appendLineTool()], now: () => new Date("2026-03-04T05:06:07Z"), newId: () => "fixture-session" };
    const agent = CodingAgent.fromSession(provider, config, session);
    agent.setCommitHook(store.hook);
    await agent.retryTurnWithCancel(nullSink, approval, new AbortController().signal);
    await store.close();
    assert.deepEqual(provider.requests, expected.requests, "the requests are version 1's, byte for byte");
    assert.deepEqual(agent.session.messages, expected.messages);
    assert.equal(await readFile(join(workspace, LINES_FILE), "utf8"), expected.lines, "nothing ran twice, nothing was lost");
    assert.deepEqual(policyDenials(agent.session), expected.policyDenials, "the denials version 1 reported, by its reading");

    const rewritten = JSON.parse(await readFile(join(checkpoint, SESSION_FILE), "utf8"));
    assert.equal(rewritten.version, SESSION_VERSION, "the first commit wrote the current version");
    const reloaded = (await new CheckpointStore(checkpoint).load())!;
    assert.deepEqual(reloaded.messages, expected.messages);
    assert.deepEqual(states(reloaded.calls), { ...FIRST_STEP, call_1_0: name === "started" ? "error" : "completed", call_1_1: "completed", });
    assert.deepEqual(policyDenials(reloaded), expected.policyDenials, "the denials survive as data");
  });
}

test("a version-1 session file alone loads as version 2 with the started calls' records as started", async (t) => {
  const { root } = await copyFixture(t, "started");
  const path = join(root, "session.json");
  const v1 = {
    version: 1, id: "s", createdAt: "2026-03-04T05:06:07.000Z",
    messages: [
      { role: "user", content: [{ type: "text", text: "go" }] },
      { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "shell", input: {} }, { type: "tool_call", id: "c2", name: "shell", input: {} }, { type: "tool_call", id: "c3", name: "shell", input: {} }] },
      { role: "user", content: [{ type: "tool_result", callId: "c1", content: "denied by default (p.yaml): no" , isError: true }] },
    ],
    calls: { c2: { at: "2026-03-04T05:06:08.000Z", host: "box", pgid: 7, startTime: 9 } },
  };
  await writeFile(path, JSON.stringify(v1));
  const session = await loadSession(path);
  assert.deepEqual(session.calls, {
    c1: { state: "error", denial: { rule: null, reason: "no" } },
    c2: { state: "started", at: "2026-03-04T05:06:08.000Z", host: "box", pgid: 7, startTime: 9 },
    c3: { state: "pending" },
  });
  assert.deepEqual(upgradeSession(structuredClone(v1) as never), session, "the upgrade is one pure function");
});
