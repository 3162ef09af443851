/** events.jsonl: one timed JSON line per event but text deltas, secrets redacted, 0600. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFile, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TaskEvent as AgentEvent } from "../../../src/runner/run-dir/runner-events.js";
import { EventLog, repairTornTail } from "../../../src/runner/run-dir/event-log.js";
import { SecretRedactor } from "../../../src/runner/run-dir/secret-redactor.js";
import { OutputError } from "../../../src/core/errors.js";
import { mountTmpfs, tempDir } from "../../support/temp-dir.js";

const AT = "2026-03-04T05:06:07.000Z";
const now = () => new Date(AT);
const lines = async (path: string) => (await readFile(path, "utf8")).split("\n").filter(Boolean).map((l) => JSON.parse(l));

test("writes each event but text deltas as a JSON line with its time, and forwards every event", async (t) => {
  const path = join(await tempDir(t), "task", "events.jsonl");
  const forwarded: AgentEvent[] = [];
  const log = await EventLog.open(path, new SecretRedactor({}), (e) => forwarded.push(e), now);
  const events: AgentEvent[] = [
    { type: "request", step: 1, messages: 1 },
    { type: "text", step: 1, delta: "hel" },
    { type: "text", step: 1, delta: "lo" },
    { type: "tool_call", step: 1, callId: "c1", name: "shell", input: { command: "ls" } },
    { type: "step_end", step: 1, stopReason: "tool_use" },
  ];
  for (const e of events) await log.emit(e);
  await log.close();
  assert.deepEqual(forwarded, events);
  assert.deepEqual(await lines(path), [
    { at: AT, type: "request", step: 1, messages: 1 },
    { at: AT, type: "tool_call", step: 1, callId: "c1", name: "shell", input: { command: "ls" } },
    { at: AT, type: "step_end", step: 1, stopReason: "tool_use" },
  ]);
});

test("redacts secrets on disk and in what it forwards, alike: the line written is the event forwarded", async (t) => {
  const path = join(await tempDir(t), "events.jsonl");
  const forwarded: AgentEvent[] = [];
  const redactor = new SecretRedactor({ DEPLOY_TOKEN: "tok-0123456789", DB_PASSWORD: 'pa"ss\\word!' });
  const log = await EventLog.open(path, redactor, (e) => forwarded.push(e), now);
  const events: AgentEvent[] = [
    { type: "tool_result", step: 2, callId: "c1", name: "shell", isError: false, durationMs: 5, preview: 'tok-0123456789 pa"ss\\word!' },
    // A provider's error body echoing the key, as JSON text inside the message.
    { type: "turn_error", code: "provider", message: 'the model request failed: 401 {"error":"bad key pa\\"ss\\\\word! for tok-0123456789"}' },
  ];
  for (const e of events) await log.emit(e);
  await log.close();
  const written = await lines(path);
  assert.deepEqual(written, [
    { ...events[0], at: AT, preview: "[redacted:DEPLOY_TOKEN] [redacted:DB_PASSWORD]" },
    { ...events[1], at: AT, message: 'the model request failed: 401 {"error":"bad key [redacted:DB_PASSWORD:json] for [redacted:DEPLOY_TOKEN]"}' },
  ]);
  assert.deepEqual(forwarded, written.map(({ at: _at, ...e }) => e));
});

test("the model's text is forwarded redacted as one text: a secret split across deltas is held back, then replaced whole", async (t) => {
  const path = join(await tempDir(t), "events.jsonl");
  const forwarded: AgentEvent[] = [];
  const secret = "tok-0123456789";
  const log = await EventLog.open(path, new SecretRedactor({ DEPLOY_TOKEN: secret }), (e) => forwarded.push(e), now);
  const text = `The key is ${secret}, and in JSON {"k":"${secret}"}. `.repeat(8);
  // Pieces of 1 to 5 characters: every secret is cut somewhere.
  let step = 0;
  for (let at = 0; at < text.length; step += 1) {
    const size = 1 + (step % 5);
    await log.emit({ type: "text", step: 1, delta: text.slice(at, at + size) });
    at += size;
  }
  await log.emit({ type: "step_end", step: 1, stopReason: "end_turn" });
  await log.close();
  const shown = forwarded.filter((e): e is Extract<AgentEvent, { type: "text" }> => e.type === "text").map((e) => e.delta).join("");
  assert.equal(shown, text.replaceAll(secret, "[redacted:DEPLOY_TOKEN]"));
  assert.ok(forwarded.every((e) => e.type !== "text" || (e.delta !== "" && !e.delta.includes("tok-"))), "no piece shows a part of the secret either");
  assert.deepEqual(forwarded.at(-1), { type: "step_end", step: 1, stopReason: "end_turn" }, "the held-back text comes before the next event");
});

test("creates the log 0600 and appends to an earlier run's log", async (t) => {
  const path = join(await tempDir(t), "events.jsonl");
  for (const step of [1, 2]) {
    const log = await EventLog.open(path, new SecretRedactor({}), () => {}, now);
    await log.emit({ type: "request", step, messages: step });
    await log.close();
  }
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.deepEqual((await lines(path)).map((l) => l.step), [1, 2]);
});

test("a torn last line a killed run left is cut off before the next append, so no torn line stays in the middle", async (t) => {
  const path = join(await tempDir(t), "events.jsonl");
  const whole = JSON.stringify({ at: AT, type: "request", step: 1, messages: 1 }) + "\n";
  await writeFile(path, whole + '{"at":"2026-03-04T05:06:07.000Z","type":"tool_ca');
  const log = await EventLog.open(path, new SecretRedactor({}), () => {}, now);
  await log.emit({ type: "request", step: 2, messages: 3 });
  await log.close();
  assert.equal(await readFile(path, "utf8"), whole + JSON.stringify({ at: AT, type: "request", step: 2, messages: 3 }) + "\n");
});

test("repairing finds the last newline across a torn line longer than one scan chunk", async (t) => {
  const path = join(await tempDir(t), "events.jsonl");
  await writeFile(path, "{}\n");
  await appendFile(path, `{"preview":"${"x".repeat(200_000)}`);
  assert.equal(await repairTornTail(path), 3);
  assert.equal(await readFile(path, "utf8"), "{}\n");
  assert.equal(await repairTornTail(join(path, "..", "missing.jsonl")), 0, "a missing log is empty");
  await writeFile(path, "no newline at all");
  assert.equal(await repairTornTail(path), 0);
  assert.equal(await readFile(path, "utf8"), "");
});

test("runner events (setup, checks) are logged like agent events", async (t) => {
  const path = join(await tempDir(t), "events.jsonl");
  const log = await EventLog.open(path, new SecretRedactor({}), () => {}, now);
  const event: AgentEvent = { type: "check_start", index: 0, total: 1, name: "unit", command: "npm test", rerun: null };
  await log.emit(event);
  await log.close();
  assert.deepEqual(await lines(path), [{ at: AT, ...event }]);
});

test("an append that fails part-way on a full disk is cut back to the last whole line (needs root for a tmpfs)", async (t) => {
  const dir = await mountTmpfs(t, "size=64k");
  if (dir === null) return t.skip("mounting a tmpfs needs root");
  const path = join(dir, "events.jsonl");
  await writeFile(join(dir, "filler"), Buffer.alloc(40 * 1024));
  const log = await EventLog.open(path, new SecretRedactor({}), () => {}, now);
  await log.emit({ type: "request", step: 1, messages: 1 });
  const before = await readFile(path, "utf8");
  await assert.rejects(log.emit({ type: "steer", text: "x".repeat(100 * 1024) }), (err: unknown) => err instanceof OutputError && err.errno === "ENOSPC" && err.path === path);
  await log.close().catch(() => {});
  assert.equal(await readFile(path, "utf8"), before, "no torn line is left behind");
});
