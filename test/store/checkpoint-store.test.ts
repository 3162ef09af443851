import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFile, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CheckpointStore, JOURNAL_FILE, SESSION_FILE } from "../../src/store/checkpoint-store.js";
import type { Boundary } from "../../src/core/commit-hook.js";
import { SessionFileError } from "../../src/core/errors.js";
import type { Message } from "../../src/core/messages.js";
import { newSession, type Session } from "../../src/core/session.js";
import { emptyTranscriptStats } from "../../src/core/transcript-types.js";
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
