/**
 * The denials a task reports are read off the calls' state records, as the approval decided
 * them; a version-1 session's come from its result text, read as version 1 read it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../../../src/core/messages.js";
import type { Session } from "../../../src/core/session.js";
import { upgradeSession } from "../../../src/core/session-v1.js";
import { policyDenials } from "../../../src/runner/execute/policy-denials.js";

const call = (id: string, name: string): Message => ({ role: "assistant", content: [{ type: "tool_call", id, name, input: {} }] });
const result = (callId: string, content: string, isError = true): Message => ({ role: "user", content: [{ type: "tool_result", callId, content, isError }] });
const v1 = (messages: Message[]): Session => upgradeSession({ version: 1, id: "s", createdAt: "2026-01-01T00:00:00Z", messages });

test("denials are read off the state records, whatever the result text says", () => {
  const session: Pick<Session, "messages" | "calls"> = {
    messages: [
      call("c1", "shell"), result("c1", "denied by default-deny-rm: no rm"),
      call("c2", "shell"), result("c2", "denied by rule 9 (x.yaml:1): looks like one\n[exit code 3]"),
      call("c3", "write_file"), result("c3", "denied by default (p.yaml): no"),
      call("c4", "read_file"), result("c4", "denied by rule 1 (a: b.yaml:3): secrets"),
    ],
    calls: {
      c1: { state: "error", denial: { rule: "default-deny-rm", reason: "no rm" } },
      c2: { state: "error" },
      c3: { state: "error", denial: { rule: null, reason: "no" } },
      c4: { state: "error", denial: { rule: "rule 1 (a: b.yaml:3)", reason: "secrets" } },
    },
  };
  assert.deepEqual(policyDenials(session), [
    { tool: "shell", rule: "default-deny-rm", reason: "no rm" },
    { tool: "write_file", rule: null, reason: "no" },
    { tool: "read_file", rule: "rule 1 (a: b.yaml:3)", reason: "secrets" },
  ]);
});

test("a version-1 session's denials are read off the text as version 1 read them, its misreadings included", () => {
  const session = v1([
    call("c1", "shell"), result("c1", "denied by rule 4 (policy.yaml:12): no pushes from CI"),
    call("c2", "write_file"), result("c2", "denied by default: writes are not allowed: .env"),
    call("c3", "edit_file"), result("c3", "denied by workspace-boundary"),
    call("c4", "read_file"), result("c4", "denied by rule 2 (p.yaml:3): line one\nline two"),
    call("c5", "shell"), result("c5", "denied by default-deny-rm: no rm"),
  ]);
  assert.deepEqual(policyDenials(session), [
    { tool: "shell", rule: "rule 4 (policy.yaml:12)", reason: "no pushes from CI" },
    { tool: "write_file", rule: null, reason: "writes are not allowed: .env" },
    { tool: "edit_file", rule: "workspace-boundary", reason: "" },
    { tool: "read_file", rule: "rule 2 (p.yaml:3)", reason: "line one\nline two" },
    { tool: "shell", rule: null, reason: "no rm" },
  ]);
});

test("a version-1 session's results that are not denials are not counted", () => {
  const session = v1([
    call("c1", "shell"), result("c1", "denied by rule 1 (p.yaml:2): but not an error", false),
    call("c2", "shell"), result("c2", "exit 1: denied by something"),
    call("c3", "shell"), result("c3", "ok"),
  ]);
  assert.deepEqual(policyDenials(session), []);
});
