import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFile, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { COUNTER_FILE, CheckpointStore, FINGERPRINT_FILE, JOURNAL_FILE, SESSION_FILE } from "../../src/store/checkpoint-store.js";
import { COUNTER_BYTES, encodeCount, readJournalCount } from "../../src/store/journal-counter.js";
import type { Boundary } from "../../src/core/commit-hook.js";
import { SessionFileError } from "../../src/core/errors.js";
import type { Message } from "../../src/core/messages.js";
import { newSession, type Session } from "../../src/core/session.js";
import { emptyTranscriptStats } from "../../src/core/transcript-types.js";
import { TAKE_EVERY_HANDLE, nodeUnderFileLimit } from "../support/file-limit.js";
import { tempDir } from "../support/temp-dir.js";

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const assistant = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });

async function commitAll(store: CheckpointStore, session: Session, boundary: Boundary = "input") {
  await store.commit({ boundary, session, sections: [], stats: emptyTranscriptStats(8000) });
}

/** A store in a fresh folder and a new session with one user message, committed. */
async function startedStore(t: { after(fn: () => unknown): void }) {
  const dir = join(await tempDir(t), "cp");
  const store = new CheckpointStore(dir);
  const session = newSession("s1", new Date());
  session.messages.push(user("one"));
  await commitAll(store, session);
  return { dir, store, session };
}

test("loads back the session as of the last complete boundary", async (t) => {
  const dir = join(await tempDir(t), "cp");
  const store = new CheckpointStore(dir);
  const session = newSession("s1", new Date("2026-01-01T00:00:00Z"));
  session.environment = "# Environment";
  for (let i = 0; i < 5; i++) {
    session.messages.push(user(`q${i}`));
    await commitAll(store, session);
    session.messages.push(assistant(`a${i}`));
    await commitAll(store, session, "intent");
  }
  await store.close();
  const loaded = await new CheckpointStore(dir).load();
  assert.deepEqual(loaded!.messages, session.messages);
  assert.equal(loaded!.environment, "# Environment");
  assert.equal(loaded!.id, "s1");
});

test("journals only what a boundary changed, including an edited last message", async (t) => {
  const dir = join(await tempDir(t), "cp");
  const store = new CheckpointStore(dir);
  const session = newSession("s1", new Date());
  session.messages.push(user("x".repeat(100_000)), assistant("ok"));
  await commitAll(store, session); // the first commit folds: the whole session is the snapshot
  session.messages.push(user("result one"));
  await commitAll(store, session, "result");
  (session.messages[2]!.content as Array<{ type: "text"; text: string }>).push({ type: "text", text: "merged" });
  await commitAll(store, session, "result");
  const journal = await readFile(join(dir, JOURNAL_FILE), "utf8");
  assert.ok(journal.length < 2_000, `journal holds the tail only (${journal.length} bytes)`);
  const records = journal.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(records.map((r) => r.keep), [2, 2]);
  await store.close();
  assert.deepEqual((await new CheckpointStore(dir).load())!.messages, session.messages);
});

test("tolerates a torn last journal line", async (t) => {
  const { dir, store, session } = await startedStore(t);
  session.messages.push(assistant("two"));
  await commitAll(store, session, "intent");
  await store.close();
  await appendFile(join(dir, JOURNAL_FILE), '{"gen":1,"keep":2,"messages":[{"role":"user","con');
  const loaded = await new CheckpointStore(dir).load();
  assert.deepEqual(loaded!.messages, session.messages);
});

test("a corrupt line before the last is a clear error naming the journal and line", async (t) => {
  const { dir, store } = await startedStore(t);
  await store.close();
  await writeFile(join(dir, JOURNAL_FILE), 'garbage\n{"gen":1}\n');
  await assert.rejects(new CheckpointStore(dir).load(), (err: unknown) =>
    err instanceof SessionFileError && err.message.includes(JOURNAL_FILE) && /line 1 is not JSON/.test(err.message));
});

test("folds the journal into the session file once it outgrows it, with files 0600 in a 0700 folder", async (t) => {
  const dir = join(await tempDir(t), "cp");
  const store = new CheckpointStore(dir, { foldMinBytes: 1_000 });
  const session = newSession("s1", new Date());
  for (let i = 0; i < 40; i++) {
    session.messages.push(i % 2 ? assistant(`answer ${i} ${"z".repeat(100)}`) : user(`question ${i}`));
    await commitAll(store, session);
  }
  await store.close();
  const snapshot = JSON.parse(await readFile(join(dir, SESSION_FILE), "utf8")) as Session;
  assert.ok(snapshot.journal!.generation > 1, "folded more than once");
  assert.ok(snapshot.messages.length > 20);
  assert.deepEqual((await new CheckpointStore(dir).load())!.messages, session.messages);
  assert.equal((await stat(join(dir, SESSION_FILE))).mode & 0o777, 0o600);
  assert.equal((await stat(join(dir, JOURNAL_FILE))).mode & 0o777, 0o600);
  assert.equal((await stat(dir)).mode & 0o777, 0o700);
});

test("ignores journal records older than the snapshot (a kill between fold and truncate)", async (t) => {
  const { dir, store, session } = await startedStore(t);
  session.messages.push(assistant("two"));
  await commitAll(store, session, "intent");
  const stale = await readFile(join(dir, JOURNAL_FILE), "utf8");
  await store.fold(session, [], null);
  await store.close();
  await writeFile(join(dir, JOURNAL_FILE), stale); // as if the kill came before the truncate
  const loaded = await new CheckpointStore(dir).load();
  assert.deepEqual(loaded!.messages, session.messages);
});

test("resumes journaling after a load without losing the loaded state", async (t) => {
  const dir = join(await tempDir(t), "cp");
  const first = new CheckpointStore(dir);
  const session = newSession("s1", new Date());
  session.messages.push(user("one"));
  await commitAll(first, session);
  await first.close();
  const second = new CheckpointStore(dir);
  const loaded = (await second.load())!;
  loaded.messages.push(assistant("two"));
  await commitAll(second, loaded, "intent");
  await second.close();
  assert.deepEqual((await new CheckpointStore(dir).load())!.messages, [user("one"), assistant("two")]);
});

test("returns null when nothing was checkpointed", async (t) => {
  assert.equal(await new CheckpointStore(join(await tempDir(t), "none")).load(), null);
});

test("takes its two files from their owner, and refuses them in two folders", async (t) => {
  const dir = await tempDir(t);
  const store = new CheckpointStore({ sessionPath: join(dir, "s.json"), journalPath: join(dir, "s.jsonl") });
  const session = newSession("s1", new Date());
  session.messages.push(user("one"));
  await commitAll(store, session);
  session.messages.push(assistant("two"));
  await commitAll(store, session, "intent");
  await store.close();
  assert.equal(JSON.parse(await readFile(join(dir, "s.json"), "utf8")).id, "s1");
  assert.ok((await readFile(join(dir, "s.jsonl"), "utf8")).includes('"two"'));
  assert.deepEqual((await new CheckpointStore({ sessionPath: join(dir, "s.json"), journalPath: join(dir, "s.jsonl") }).load())!.messages, session.messages);
  assert.throws(() => new CheckpointStore({ sessionPath: join(dir, "a", "s.json"), journalPath: join(dir, "b", "s.jsonl") }),
    (err: unknown) => err instanceof Error && /in one folder/.test(err.message));
});

/** A journal of five records after the fold, the store closed. */
async function fiveRecords(t: { after(fn: () => unknown): void }) {
  const { dir, store, session } = await startedStore(t);
  for (let i = 0; i < 5; i++) {
    session.messages.push(i % 2 ? user(`q${i}`) : assistant(`a${i}`));
    await commitAll(store, session, i % 2 ? "input" : "intent");
  }
  await store.close();
  return { dir, session };
}

test("numbers each journal record and counts the committed ones in the counter file", async (t) => {
  const { dir } = await fiveRecords(t);
  const records = (await readFile(join(dir, JOURNAL_FILE), "utf8")).trim().split("\n").map((l) => JSON.parse(l) as { seq: number });
  assert.deepEqual(records.map((r) => r.seq), [1, 2, 3, 4, 5]);
  const counter = await readFile(join(dir, COUNTER_FILE), "ascii");
  assert.equal(counter.length, COUNTER_BYTES);
  assert.deepEqual(await readJournalCount(join(dir, COUNTER_FILE)), { generation: 1, count: 5 });
  assert.equal((await stat(join(dir, COUNTER_FILE))).mode & 0o777, 0o600);
});

test("a journal cut in its middle is an error naming the journal and the missing records", async (t) => {
  const { dir } = await fiveRecords(t);
  const text = await readFile(join(dir, JOURNAL_FILE), "utf8");
  const secondLine = text.indexOf("\n") + 1;
  await writeFile(join(dir, JOURNAL_FILE), text.slice(0, secondLine + 20)); // inside line 2
  await assert.rejects(new CheckpointStore(dir).load(), (err: unknown) =>
    err instanceof SessionFileError && err.code === "session_invalid" && err.message.startsWith(join(dir, JOURNAL_FILE)) &&
    /cut: 5 records were committed but it holds 1; records 2–5 are missing/.test(err.message));
});

test("a gap in the journal's sequence is an error naming the missing record", async (t) => {
  const { dir } = await fiveRecords(t);
  const lines = (await readFile(join(dir, JOURNAL_FILE), "utf8")).split("\n");
  lines.splice(2, 1); // drop record 3
  await writeFile(join(dir, JOURNAL_FILE), lines.join("\n"));
  await assert.rejects(new CheckpointStore(dir).load(), (err: unknown) =>
    err instanceof SessionFileError && err.message.startsWith(join(dir, JOURNAL_FILE)) && /gap: record 3 is missing/.test(err.message));
});

test("a journal one record ahead of its counter (a kill between the two writes) loads whole", async (t) => {
  const { dir, session } = await fiveRecords(t);
  await writeFile(join(dir, COUNTER_FILE), encodeCount({ generation: 1, count: 4 }));
  assert.deepEqual((await new CheckpointStore(dir).load())!.messages, session.messages);
});

test("started calls are journaled without their fingerprint, which sits in its own file and comes back on load", async (t) => {
  const { dir, store, session } = await startedStore(t);
  session.messages.push({ role: "assistant", content: [{ type: "tool_call", id: "c1", name: "shell", input: { command: "make" } }] });
  await commitAll(store, session, "intent");
  const fingerprint = { files: { "src/a.js": [10, 1234.5] as [number, number] }, capped: false };
  session.calls = { c1: { state: "started", at: "2026-01-01T00:00:00.000Z", host: "box", pgid: 77, startTime: 5, fingerprint } };
  await commitAll(store, session, "started");
  await store.close();
  const journal = await readFile(join(dir, JOURNAL_FILE), "utf8");
  assert.ok(!journal.includes("src/a.js"), "the fingerprint is not in a journal line");
  assert.ok(journal.includes('"pgid":77'));
  assert.deepEqual(JSON.parse(await readFile(join(dir, FINGERPRINT_FILE), "utf8")), { callId: "c1", fingerprint });
  assert.deepEqual((await new CheckpointStore(dir).load())!.calls, session.calls);

  const again = new CheckpointStore(dir);
  const loaded = (await again.load())!;
  loaded.messages.push({ role: "user", content: [{ type: "tool_result", callId: "c1", content: "ok" }] });
  loaded.calls = { c1: { state: "completed", at: "2026-01-01T00:00:01.000Z" } };
  await commitAll(again, loaded, "result");
  await again.close();
  assert.deepEqual((await new CheckpointStore(dir).load())!.calls, loaded.calls, "an answered call is completed");
});

test("a boundary's journal record holds only the call states that changed, and the states load back whole", async (t) => {
  const { dir, store, session } = await startedStore(t);
  const ids = ["c1", "c2", "c3"];
  session.messages.push({ role: "assistant", content: ids.map((id) => ({ type: "tool_call" as const, id, name: "shell", input: {} })) });
  session.calls = Object.fromEntries(ids.map((id) => [id, { state: "pending" as const }]));
  await commitAll(store, session, "intent");
  session.messages.push({ role: "user", content: [{ type: "tool_result", callId: "c1", content: "ok" }] });
  session.calls = { ...session.calls, c1: { state: "completed", at: "2026-01-01T00:00:01.000Z" } };
  await commitAll(store, session, "result");
  await store.close();
  const records = (await readFile(join(dir, JOURNAL_FILE), "utf8")).trim().split("\n").map((line) => JSON.parse(line) as { calls?: object });
  assert.deepEqual(records.map((r) => Object.keys(r.calls ?? {})), [["c1", "c2", "c3"], ["c1"]]);
  assert.deepEqual((await new CheckpointStore(dir).load())!.calls, session.calls);
});

test("a session whose call states disagree with its messages is an error naming the call", async (t) => {
  const dir = join(await tempDir(t), "cp");
  const session = newSession("s1", new Date());
  session.messages.push(user("go"), { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "shell", input: {} }] });
  session.calls = { c1: { state: "completed" } };
  const writer = new CheckpointStore(dir);
  await writer.fold(session, [], null);
  await writer.close();
  await assert.rejects(new CheckpointStore(dir).load(), (err: unknown) =>
    err instanceof SessionFileError && /calls\.c1: the call is completed but has no result/.test(err.message) && err.message.startsWith(join(dir, SESSION_FILE)));
});

test("the transcript stats' reasoningTokens round-trip through the snapshot and the journal; a file written before them reads 0", async (t) => {
  const dir = join(await tempDir(t), "cp");
  const store = new CheckpointStore(dir);
  const session = newSession("s1", new Date());
  session.messages.push(user("one"));
  const stats = (outputTokens: number, reasoningTokens: number) => ({ ...emptyTranscriptStats(8000), requests: 1, outputTokens, reasoningTokens });
  await store.commit({ boundary: "input", session, sections: [], stats: stats(900, 700) }); // the first commit folds: the snapshot
  assert.deepEqual(JSON.parse(await readFile(join(dir, SESSION_FILE), "utf8")).transcript.stats.reasoningTokens, 700);
  session.messages.push(assistant("two"));
  await store.commit({ boundary: "intent", session, sections: [], stats: stats(1_500, 1_100) }); // a journal record
  await store.close();
  const reasoning = async () => (await new CheckpointStore(dir).load())!.transcript!.stats!.reasoningTokens;
  assert.equal(await reasoning(), 1_100);

  // An older rhema wrote neither field: its snapshot and journal load, with no reasoning counted.
  const strip = (text: string) => text.replace(/,\s*"reasoningTokens":\s*\d+/g, "");
  for (const file of [SESSION_FILE, JOURNAL_FILE]) {
    await writeFile(join(dir, file), strip(await readFile(join(dir, file), "utf8")));
    assert.doesNotMatch(await readFile(join(dir, file), "utf8"), /reasoningTokens/, file);
  }
  assert.equal(await reasoning(), 0);
});

test("the session's token counter is journalled when it is set and loaded back, before and after a fold", async (t) => {
  for (const foldMinBytes of [1024 * 1024, 1]) {
    const dir = join(await tempDir(t), `cp-${foldMinBytes}`);
    const store = new CheckpointStore(dir, { foldMinBytes });
    const session = newSession("s1", new Date("2026-01-01T00:00:00Z"));
    session.messages.push(user("q0"));
    await commitAll(store, session);
    session.tokenCounter = { kind: "calibrated", id: "calibrated:0123456789abcdef", factors: { perChar: { prose: 0.3, code: 0.4, json: 0.35, tool_result: 0.33 }, perMessage: 3, perToolBlock: 2 } };
    session.messages.push(assistant("a0"));
    await commitAll(store, session, "intent");
    assert.deepEqual((await new CheckpointStore(dir).load())!.tokenCounter, session.tokenCounter, `fold at ${foldMinBytes} bytes`);
    session.messages.push(user("q1"));
    await commitAll(store, session);
    await store.close();
    assert.deepEqual((await new CheckpointStore(dir).load())!.tokenCounter, session.tokenCounter, `fold at ${foldMinBytes} bytes, later`);
  }
});

test("a boundary on disk stays committed when what follows it fails: out of file handles, the fold after the journal's line fails, and the commit does not", async (t) => {
  const dir = join(await tempDir(t), "cp");
  // A child under a low `ulimit -n` takes every file handle left once the journal is open: the
  // journal's line needs none, the fold that the line's size asks for needs several.
  const script = `
    import { closeSync, openSync } from "node:fs";
    const { CheckpointStore } = await import(${JSON.stringify(new URL("../../src/store/checkpoint-store.js", import.meta.url).href)});
    const { newSession } = await import(${JSON.stringify(new URL("../../src/core/session.js", import.meta.url).href)});
    const say = (text) => ({ role: "user", content: [{ type: "text", text }] });
    const commit = (store, session) => store.commit({ boundary: "result", session, sections: [], stats: null });
    const store = new CheckpointStore(${JSON.stringify(dir)}, { foldMinBytes: 1 });
    const session = newSession("s1", new Date("2026-12-03T00:00:00Z"));
    session.messages.push(say("one"));
    await commit(store, session);
    session.messages.push(say("two ".repeat(5000)));
    ${TAKE_EVERY_HANDLE}
    let outcome = "committed";
    await commit(store, session).catch((err) => (outcome = "failed: " + err.message));
    for (const fd of held) closeSync(fd);
    session.messages.push(say("three"));
    await commit(store, session);
    await store.close();
    process.stdout.write(JSON.stringify({ outcome, held: held.length }));
  `;
  const child = nodeUnderFileLimit(256, script);
  assert.equal(child.status, 0, child.stderr);
  const { outcome, held } = JSON.parse(child.stdout) as { outcome: string; held: number };
  assert.ok(held > 0, "the child held the handles it could take");
  assert.equal(outcome, "committed", "the line was on disk: the fold's failure is not the commit's");
  const loaded = await new CheckpointStore(dir).load();
  assert.deepEqual(loaded!.messages.map((m) => (m.content[0] as { text: string }).text.slice(0, 5)), ["one", "two t", "three"]);
});


test("a fold whose snapshot is written but whose journal cannot be started keeps its boundary; the next commit fails before writing, and once the journal can be made, goes on", async (t) => {
  const dir = join(await tempDir(t), "cp");
  await mkdir(join(dir, JOURNAL_FILE), { recursive: true }); // a folder where the journal must go
  const store = new CheckpointStore(dir);
  const session = newSession("s1", new Date());
  session.messages.push(user("one"));
  await commitAll(store, session); // the first commit folds: the snapshot holds it
  const snapshotMessages = async () => (JSON.parse(await readFile(join(dir, SESSION_FILE), "utf8")) as Session).messages;
  assert.deepEqual(await snapshotMessages(), [user("one")]);
  session.messages.push(assistant("two"));
  await assert.rejects(commitAll(store, session, "intent"), (err: unknown) => (err as { code?: string }).code === "ERR_FS_EISDIR" || (err as { code?: string }).code === "EISDIR");
  assert.deepEqual(await snapshotMessages(), [user("one")], "nothing of the failed boundary was written");
  await rm(join(dir, JOURNAL_FILE), { recursive: true });
  await commitAll(store, session, "intent");
  await store.close();
  assert.deepEqual((await new CheckpointStore(dir).load())?.messages, [user("one"), assistant("two")]);
});
