/**
 * Cassette providers: a recording of a scripted model, to a real cassette file, replayed with no
 * model at all gives the same streams; identical requests are answered in their recorded order; a
 * changed tool description is a strict miss naming it; hybrid asks the live model only from the
 * miss on, record-missing also appends what it asked.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ModelProvider, ModelRequest, StreamEvent } from "../../src/core/provider.js";
import { CassetteMissError, recordingProvider, replayingProvider, type CassetteKeying } from "../../src/providers/cassette.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { CassetteWriter, readCassette } from "../../src/store/cassette-file.js";
import { tempDir } from "../support/temp-dir.js";

const HEADER = { cassette: 1 as const, provider: "scripted", model: null, recordedAt: "2026-12-03T14:00:00.000Z" };
const keying = (run: string): CassetteKeying => ({
  provider: "scripted", model: null, redact: (text) => text.replaceAll("sk-secret-123", "[redacted]"),
  volatile: { literals: [{ name: "run path", value: run, placeholder: "<run>" }] },
});
const TOOLS = [{ name: "shell", description: "Runs a command.", inputSchema: { type: "object" } }];

function req(run: string, texts: string[], tools = TOOLS): ModelRequest {
  return {
    system: `Work in ${run}/ws.`, tools, cacheBreakpoints: [],
    messages: texts.map((text, i) => ({ role: i % 2 === 0 ? "user" as const : "assistant" as const, content: [{ type: "text" as const, text }] })),
  };
}

async function collect(provider: ModelProvider, request: ModelRequest): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const e of provider.stream(request, new AbortController().signal)) out.push(e);
  return out;
}

/** The text a stream says (its deltas joined: a cassette stores adjacent deltas as one) and its other events. */
function said(events: readonly StreamEvent[]): { text: string; rest: StreamEvent[] } {
  return { text: events.flatMap((e) => (e.type === "text" ? [e.delta] : [])).join(""), rest: events.filter((e) => e.type !== "text") };
}

/** A model that answers the n-th request it gets with "answer n": identical requests get different answers. */
function countingModel(): ModelProvider {
  let n = 0;
  return {
    id: "counting",
    async *stream() {
      n += 1;
      yield { type: "text", delta: `answer ${n}` };
      if (n === 1) yield { type: "text", delta: " with sk-sec" };
      if (n === 1) yield { type: "text", delta: "ret-123 split" };
      yield { type: "usage", usage: { inputTokens: 10 * n, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: n } };
      yield { type: "stop", reason: "end_turn" };
    },
  };
}

/** Records three requests (the second and third identical) into a cassette at `path`. */
async function record(path: string, run: string): Promise<StreamEvent[][]> {
  const model = countingModel();
  const writer = await CassetteWriter.open(path, HEADER);
  const recorder = recordingProvider(model, writer, keying(run));
  const streams = [
    await collect(recorder, req(run, ["go"])),
    await collect(recorder, req(run, ["go", "first", "again"])),
    await collect(recorder, req(run, ["go", "first", "again"])),
  ];
  await writer.close();
  return streams;
}

test("a replay with no model answers each request with the recorded stream, identical requests in their recorded order, secrets redacted", async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, "s/t/default/1.jsonl");
  const live = await record(path, "/runs/a");
  const cassette = (await readCassette(path))!;
  assert.equal(cassette.exchanges.length, 3);
  assert.doesNotMatch(JSON.stringify(cassette), /sk-secret-123/);
  const replay = replayingProvider({ id: "cassette:scripted", exchanges: cassette.exchanges, keying: keying("/runs/b"), mode: "strict" });
  const replayed = [
    await collect(replay, req("/runs/b", ["go"])),
    await collect(replay, req("/runs/b", ["go", "first", "again"])),
    await collect(replay, req("/runs/b", ["go", "first", "again"])),
  ];
  assert.deepEqual(replayed.map(said), live.map(said).map(({ text, rest }) => ({ text: text.replace("sk-secret-123", "[redacted]"), rest })));
  assert.deepEqual(replayed.map((events) => said(events).text), ["answer 1 with [redacted] split", "answer 2", "answer 3"], "the two identical requests got their own recorded answers, in order; the secret split across deltas is redacted");
  await assert.rejects(collect(replay, req("/runs/b", ["go", "first", "again"])), (err: unknown) =>
    err instanceof CassetteMissError && err.code === "cassette_miss" && /all used/.test(err.message));
});

test("strict: a changed tool description is a miss naming the tool spec as the first difference", async (t) => {
  const path = join(await tempDir(t), "1.jsonl");
  await record(path, "/r");
  const replay = replayingProvider({ id: "cassette:scripted", exchanges: (await readCassette(path))!.exchanges, keying: keying("/r"), mode: "strict" });
  const changed = [{ ...TOOLS[0]!, description: "Runs a bash command." }];
  await assert.rejects(collect(replay, req("/r", ["go"], changed)), (err: unknown) => {
    assert.ok(err instanceof CassetteMissError);
    assert.equal(err.message, "no recorded answer for request 1 (1 messages); the nearest recorded request (exchange 1) differs first at tools[0].description:\n  recorded:  Runs a command.\n  requested: Runs a bash command.");
    return true;
  });
});

test("hybrid asks the live model only from the first miss on and stores nothing; record-missing appends what it asked", async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, "1.jsonl");
  await record(path, "/r");
  const exchanges = (await readCassette(path))!.exchanges;
  for (const mode of ["hybrid", "record-missing"] as const) {
    const live = new ScriptedProvider([{ say: "live one" }, { say: "live two" }, { say: "live three" }]);
    const notes: string[] = [];
    const writer = mode === "record-missing" ? await CassetteWriter.open(path, HEADER) : undefined;
    const replay = replayingProvider({ id: "cassette:scripted", exchanges, keying: keying("/r"), mode, live, ...(writer ? { sink: writer } : {}), onLive: (why) => notes.push(why) });
    const first = await collect(replay, req("/r", ["go"]));
    assert.equal(live.requests.length, 0, `${mode}: a hit does not ask the model`);
    assert.equal(said(first).text, "answer 1 with [redacted] split");
    await collect(replay, req("/r", ["go", "first", "something else"]));
    assert.equal(live.requests.length, 1, `${mode}: the miss went live`);
    // Recorded, but after a miss the history holds a live answer: live from here on.
    await collect(replay, req("/r", ["go", "first", "again"]));
    assert.equal(live.requests.length, 2, `${mode}: once live, the rest of the trial is live`);
    assert.equal(notes.length, 1);
    assert.match(notes[0]!, /differs first at messages\[2\]\.content\[0\]\.text/);
    await writer?.close();
    assert.equal((await readCassette(path))!.exchanges.length, mode === "hybrid" ? 3 : 5, `${mode}: what went live is ${mode === "hybrid" ? "not stored" : "appended"}`);
  }
});
