/**
 * A cassette on disk: written an exchange at a time (0600), read back; a kill's torn line left out
 * and cut off when the recording continues; a damaged line named by file, line and field; a
 * growing conversation stored as deltas (version 2) that read back as the whole requests.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFile, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { Ajv2020 } from "ajv/dist/2020.js";
import { CASSETTE_VERSION, CassetteFileError, CassetteWriter, cassetteJsonSchema, keptExchanges, readCassette, writeCassette } from "../../src/store/cassette-file.js";
import { repoRoot } from "../support/paths.js";
import type { CanonicalRequest, CassetteExchange } from "../../src/core/cassette-exchange.js";
import { tempDir } from "../support/temp-dir.js";

const HEADER = { cassette: CASSETTE_VERSION, provider: "anthropic", model: "claude-sonnet-4-5", recordedAt: "2026-12-03T14:00:00.000Z" };

function exchange(text: string): Omit<CassetteExchange, "exchange"> {
  return {
    hash: `sha256:${"ab".repeat(32)}`,
    request: { provider: "anthropic", model: "claude-sonnet-4-5", system: null, tools: [], messages: [{ role: "user", content: [{ type: "text", text }] }], cacheBreakpoints: [0] },
    normalised: [],
    events: [{ type: "text", delta: `re: ${text}` }, { type: "usage", usage: { inputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 2 } }, { type: "stop", reason: "end_turn" }],
    usage: { inputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 2 },
    timing: { firstEventMs: 5, totalMs: 9 },
  };
}

test("exchanges appended one at a time read back in order, from a 0600 file in 0700 folders", async (t) => {
  const path = join(await tempDir(t), "cassettes/s/t/default/1.jsonl");
  const writer = await CassetteWriter.open(path, HEADER);
  await writer.append(exchange("one"));
  await writer.append(exchange("two"));
  await writer.close();
  const cassette = await readCassette(path);
  assert.deepEqual(cassette?.header, HEADER);
  assert.deepEqual(cassette?.exchanges.map((e) => [e.exchange, (e.request.messages[0] as { content: Array<{ text: string }> }).content[0]!.text]), [[1, "one"], [2, "two"]]);
  assert.equal(cassette?.tornTail, false);
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.equal((await stat(join(path, ".."))).mode & 0o777, 0o700);
  assert.equal(await readCassette(join(path, "../2.jsonl")), null, "no file: no cassette");
});

test("a recording killed mid-line is valid up to its last exchange, and continuing it cuts the torn line first", async (t) => {
  const path = join(await tempDir(t), "1.jsonl");
  const writer = await CassetteWriter.open(path, HEADER);
  await writer.append(exchange("one"));
  await writer.close();
  await appendFile(path, JSON.stringify({ exchange: 2, ...exchange("two") }).slice(0, 80));
  const torn = await readCassette(path);
  assert.equal(torn?.exchanges.length, 1);
  assert.equal(torn?.tornTail, true);
  const again = await CassetteWriter.open(path, HEADER);
  await again.append(exchange("two again"));
  await again.close();
  const continued = await readCassette(path);
  assert.deepEqual(continued?.exchanges.map((e) => e.exchange), [1, 2]);
  assert.equal(continued?.tornTail, false);
  // A header the kill cut is written anew.
  const headerCut = join(await tempDir(t), "2.jsonl");
  await writeFile(headerCut, JSON.stringify(HEADER).slice(0, 20));
  await (await CassetteWriter.open(headerCut, HEADER)).close();
  assert.deepEqual((await readCassette(headerCut))?.header, HEADER);
});

test("a damaged line before the last is an error naming the file, the line and the field; a gap in the numbering too", async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, "1.jsonl");
  const good = JSON.stringify({ exchange: 1, ...exchange("one") });
  await writeFile(path, [JSON.stringify(HEADER), good.replace('"usage":{"inputTokens":3', '"usage":{"inputTokens":-3'), good].join("\n") + "\n");
  await assert.rejects(readCassette(path), (err: unknown) => err instanceof CassetteFileError && err.code === "invalid_input" && err.message.startsWith(`${path}: line 2, field `) && /inputTokens/.test(err.message));
  await writeFile(path, [JSON.stringify(HEADER), "{not json", good].join("\n") + "\n");
  await assert.rejects(readCassette(path), (err: unknown) => err instanceof CassetteFileError && err.message.startsWith(`${path}: line 2: not JSON`));
  await writeFile(path, [JSON.stringify(HEADER), good.replace('"exchange":1', '"exchange":2')].join("\n") + "\n");
  await assert.rejects(readCassette(path), /line 2: exchange 2 where 1 was expected/);
  await writeFile(path, [JSON.stringify({ ...HEADER, cassette: 3 })].join("\n") + "\n");
  await assert.rejects(readCassette(path), /line 1, field cassette/);
  assert.match(await readFile(path, "utf8"), /"cassette":3/, "reading never rewrites");
});

test("another recording's cassette is replaced, this recording's continued; a FIFO or folder at the path is an error naming it, never a read that waits", async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, "s/t/default/1.jsonl");
  const first = await CassetteWriter.open(path, { ...HEADER, trialStartedAt: "A" }, (kept) => kept.trialStartedAt === "A");
  await first.append(exchange("one"));
  await first.close();
  const again = await CassetteWriter.open(path, { ...HEADER, trialStartedAt: "A" }, (kept) => kept.trialStartedAt === "A");
  await again.append(exchange("two"));
  await again.close();
  assert.equal((await readCassette(path))!.exchanges.length, 2, "the same trial continues its cassette");
  const fresh = await CassetteWriter.open(path, { ...HEADER, trialStartedAt: "B" }, (kept) => kept.trialStartedAt === "B");
  await fresh.append(exchange("anew"));
  await fresh.close();
  const replaced = (await readCassette(path))!;
  assert.equal(replaced.header.trialStartedAt, "B");
  assert.deepEqual(replaced.exchanges.map((e) => e.exchange), [1]);

  const fifo = join(dir, "fifo.jsonl");
  execFileSync("mkfifo", [fifo]);
  await assert.rejects(readCassette(fifo), (err: unknown) => err instanceof CassetteFileError && /fifo\.jsonl.*FIFO/.test(err.message));
  await assert.rejects(CassetteWriter.open(fifo, HEADER), (err: unknown) => err instanceof CassetteFileError && /FIFO/.test(err.message));
  await assert.rejects(readCassette(dir), (err: unknown) => err instanceof CassetteFileError && err.message.includes(dir));
});

test("schema/cassette.schema.json is the zod schema's, and a cassette's every line validates against it", async (t) => {
  const committed = JSON.parse(await readFile(join(repoRoot, "schema/cassette.schema.json"), "utf8"));
  assert.deepStrictEqual(committed, cassetteJsonSchema(), "run `npm run build && node scripts/gen-schemas.mjs`");
  const dir = await tempDir(t);
  const path = join(dir, "1.jsonl");
  const writer = await CassetteWriter.open(path, { ...HEADER, trialStartedAt: "2026-12-03T14:00:00.000Z" });
  await writer.append(step(1, { maxOutputTokens: 100 }));
  await writer.append({ ...exchange("summary"), who: "worker" });
  await writer.append(step(2, { system: "be brief" }));
  await writer.close();
  const validate = new Ajv2020({ strict: false }).addFormat("date-time", (s: string) => !Number.isNaN(Date.parse(s))).compile(committed);
  const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
  assert.equal(lines.length, 4);
  assert.ok("requestDelta" in JSON.parse(lines[3]!), "a delta line is among those checked");
  for (const line of lines) assert.ok(validate(JSON.parse(line)), JSON.stringify(validate.errors));
  assert.ok(!validate({ ...JSON.parse(lines[1]!), who: "someone" }), "an unknown field value is refused");
  assert.ok(!validate({ ...JSON.parse(lines[3]!), request: JSON.parse(lines[1]!).request }), "a line with both a request and a delta is refused");
  assert.ok(!validate({ ...JSON.parse(lines[3]!), requestDelta: { ...JSON.parse(lines[3]!).requestDelta, removed: ["system"] } }), "only an optional field can be removed");
  // A version-1 cassette's lines are lines of the schema too.
  assert.ok(validate({ ...HEADER, cassette: 1 }));

});

/** Message `i` of a conversation: a user's or an assistant's, long enough that copies of it would show in a file's size. */
function message(i: number): unknown {
  return { role: i % 2 === 0 ? "user" : "assistant", content: [{ type: "text", text: `message ${i}: ${"lorem ipsum ".repeat(20)}` }] };
}

/** The task model's exchange at step `n`: the conversation's first 2n messages (two more each step). */
function step(n: number, fields: Partial<CanonicalRequest> = {}): Omit<CassetteExchange, "exchange"> {
  const base = exchange(`step ${n}`);
  return { ...base, request: { ...base.request, messages: Array.from({ length: 2 * n }, (_, i) => message(i)), ...fields } };
}

/** The compaction worker's exchange: a conversation of its own, unrelated to the model's. */
function workerStep(n: number): Omit<CassetteExchange, "exchange"> {
  const base = exchange(`summarise ${n}`);
  return { ...base, who: "worker", request: { ...base.request, system: "summarise", messages: [{ role: "user", content: [{ type: "text", text: `summarise part ${n}: ${"dolor sit amet ".repeat(20)}` }] }] } };
}

/** Records `steps` model steps, a worker exchange after every fourth; what was appended, in order. */
async function recordTrial(path: string, steps: number): Promise<CassetteExchange[]> {
  const writer = await CassetteWriter.open(path, HEADER);
  const appended: CassetteExchange[] = [];
  for (let n = 1; n <= steps; n += 1) {
    appended.push(await writer.append(step(n)));
    if (n % 4 === 0) appended.push(await writer.append(workerStep(n)));
  }
  await writer.close();
  return appended;
}

/** The file's exchange lines as JSON. */
async function exchangeLines(path: string): Promise<Array<Record<string, unknown> & { requestDelta?: Record<string, unknown> }>> {
  return (await readFile(path, "utf8")).trimEnd().split("\n").slice(1).map((line) => JSON.parse(line));
}

test("a conversation growing by two messages a step is stored as deltas, reads back as the requests appended, and its file grows linearly", async (t) => {
  const dir = await tempDir(t);
  const long = join(dir, "60.jsonl");
  const appended = await recordTrial(long, 60);
  const cassette = (await readCassette(long))!;
  assert.equal(cassette.header.cassette, 2);
  assert.deepEqual(cassette.exchanges, appended);
  const lines = await exchangeLines(long);
  // Every model request after the first extends the model's last; the worker's, the worker's last.
  const modelLines = lines.filter((line) => line.who === undefined);
  assert.deepEqual(modelLines.slice(1).map((line) => line.requestDelta?.keep), Array.from({ length: 59 }, (_, i) => 2 * (i + 1)));
  assert.ok(modelLines.slice(1).every((line) => (line.requestDelta?.messages as unknown[]).length === 2 && !("request" in line)));
  const firstWorker = lines.findIndex((line) => line.who === "worker");
  assert.deepEqual(lines[firstWorker + 1]?.requestDelta?.from, firstWorker, "the model's next request extends the model's last, not the worker's between them");

  const short = join(dir, "15.jsonl");
  await recordTrial(short, 15);
  const [longBytes, shortBytes] = [(await stat(long)).size, (await stat(short)).size];
  const wholeBytes = appended.reduce((sum, e) => sum + JSON.stringify(e).length + 1, 0);
  t.diagnostic(`15 steps: ${shortBytes} bytes; 60 steps: ${longBytes} bytes (${(longBytes / shortBytes).toFixed(2)}x); 60 steps stored whole: ${wholeBytes} bytes`);
  assert.ok(longBytes < 4.5 * shortBytes, `60 steps take ${longBytes} bytes, 15 take ${shortBytes}: four times the steps should be about four times the bytes, not sixteen`);
});

test("a request whose messages were rewritten (a compaction) is stored whole, and the next extends it", async (t) => {
  const path = join(await tempDir(t), "1.jsonl");
  const writer = await CassetteWriter.open(path, HEADER);
  const appended = [await writer.append(step(1)), await writer.append(step(2))];
  const compacted = exchange("the summary of steps 1 and 2");
  appended.push(await writer.append({ ...compacted, request: { ...compacted.request, compactedSteps: 2 } }));
  appended.push(await writer.append({ ...compacted, request: { ...compacted.request, compactedSteps: 2, messages: [...compacted.request.messages, message(1)] } }));
  await writer.close();
  const lines = await exchangeLines(path);
  assert.deepEqual(lines.map((line) => "request" in line ? "whole" : line.requestDelta), ["whole", { from: 1, keep: 2, messages: [message(2), message(3)] }, "whole", { from: 3, keep: 1, messages: [message(1)] }]);
  assert.deepEqual((await readCassette(path))?.exchanges, appended);
});

test("an optional field present in one request and absent in the next reads back absent; only the fields that differ are given", async (t) => {
  const path = join(await tempDir(t), "1.jsonl");
  const writer = await CassetteWriter.open(path, HEADER);
  const appended = [
    await writer.append(step(1, { maxOutputTokens: 4096, cacheOneHourThrough: 1, compactedSteps: 3 })),
    await writer.append(step(2, { cacheOneHourThrough: 3, compactedSteps: 3, system: "be brief" })),
    await writer.append(step(3, { compactedSteps: 3, system: "be brief", model: null })),
  ];
  await writer.close();
  const lines = await exchangeLines(path);
  assert.deepEqual(lines.slice(1).map((line) => ({ ...line.requestDelta, messages: undefined })), [
    { from: 1, keep: 2, messages: undefined, system: "be brief", cacheOneHourThrough: 3, removed: ["maxOutputTokens"] },
    { from: 2, keep: 4, messages: undefined, model: null, removed: ["cacheOneHourThrough"] },
  ]);
  const read = (await readCassette(path))!.exchanges;
  assert.deepEqual(read, appended);
  assert.deepEqual(read.map((e) => Object.keys(e.request).filter((key) => ["maxOutputTokens", "cacheOneHourThrough"].includes(key))), [["cacheOneHourThrough", "maxOutputTokens"], ["cacheOneHourThrough"], []]);
});

test("a pruned cassette's deltas are encoded again against the exchanges kept: it reads back as them, renumbered", async (t) => {
  const dir = await tempDir(t);
  const recorded = join(dir, "recorded.jsonl");
  const appended = await recordTrial(recorded, 9);
  // 1–4 model (steps 1–4), 5 worker, 6–9 model (steps 5–8), 10 worker, 11 model (step 9): step 8's
  // base (step 7) is dropped, and so is every worker request's (each is whole: they share nothing).
  const kept = keptExchanges(appended, new Set([2, 5, 9, 10, 11]));
  const pruned = join(dir, "pruned.jsonl");
  await writeCassette(pruned, { ...HEADER, cassette: 1 }, kept);
  const cassette = (await readCassette(pruned))!;
  assert.equal(cassette.header.cassette, 2, "a prune writes the current version");
  assert.deepEqual(cassette.exchanges, kept);
  assert.deepEqual(cassette.exchanges.map((e) => e.exchange), [1, 2, 3, 4, 5]);
  const lines = await exchangeLines(pruned);
  assert.deepEqual(lines.map((line) => "request" in line ? "whole" : { from: line.requestDelta?.from, keep: line.requestDelta?.keep }), [
    "whole", "whole", { from: 1, keep: 4 }, "whole", { from: 3, keep: 16 },
  ]);
});

test("a continued recording encodes its new requests against those kept; a continued version-1 cassette stays version 1", async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, "2.jsonl");
  const first = await CassetteWriter.open(path, HEADER);
  const appended = [await first.append(step(1)), await first.append(workerStep(1)), await first.append(step(2))];
  await first.close();
  const again = await CassetteWriter.open(path, HEADER);
  appended.push(await again.append(workerStep(2)), await again.append(step(3)));
  await again.close();
  assert.deepEqual((await readCassette(path))?.exchanges, appended);
  assert.deepEqual((await exchangeLines(path)).map((line) => "request" in line ? "whole" : line.requestDelta?.from), ["whole", "whole", 1, "whole", 3]);

  const old = join(dir, "1.jsonl");
  const v1 = [exchange("one"), exchange("two")].map((e, i) => ({ exchange: i + 1, ...e, request: step(i + 1).request }));
  await writeFile(old, [{ ...HEADER, cassette: 1 }, ...v1].map((line) => JSON.stringify(line) + "\n").join(""));
  const continued = await CassetteWriter.open(old, HEADER);
  const added = [await continued.append(step(3)), await continued.append(step(4))];
  await continued.close();
  const read = (await readCassette(old))!;
  assert.equal(read.header.cassette, 1);
  assert.deepEqual(read.exchanges, [...v1, ...added]);
  assert.ok((await exchangeLines(old)).every((line) => "request" in line && !("requestDelta" in line)), "every line of a version-1 file stores its request whole");
});

test("a delta whose base is not an earlier exchange, or that keeps more messages than its base has, is an error naming the file, the line and the field", async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, "1.jsonl");
  const writer = await CassetteWriter.open(path, HEADER);
  for (let n = 1; n <= 4; n += 1) await writer.append(step(n));
  await writer.close();
  const [header, ...lines] = (await readFile(path, "utf8")).trimEnd().split("\n");
  // Line 4 is exchange 3, a delta against exchange 2 keeping its 4 messages.
  assert.deepEqual({ ...JSON.parse(lines[2]!).requestDelta, messages: undefined }, { from: 2, keep: 4, messages: undefined });
  const withLine4 = async (edit: (delta: Record<string, unknown>) => Record<string, unknown>) => {
    const line = JSON.parse(lines[2]!);
    await writeFile(path, [header, lines[0], lines[1], JSON.stringify({ ...line, requestDelta: edit(line.requestDelta) }), lines[3]].join("\n") + "\n");
  };
  const rejects = (field: string, detail: RegExp) => assert.rejects(readCassette(path), (err: unknown) =>
    err instanceof CassetteFileError && err.code === "invalid_input" && err.message.startsWith(`${path}: line 4, field ${field}: `) && detail.test(err.message));

  await withLine4((delta) => ({ ...delta, from: 4 }));
  await rejects("requestDelta.from", /exchange 4 is not an earlier exchange of this cassette \(this line is exchange 3\)/);
  await withLine4((delta) => ({ ...delta, from: 3 }));
  await rejects("requestDelta.from", /exchange 3 is not an earlier exchange/);
  await withLine4((delta) => ({ ...delta, from: 9 }));
  await rejects("requestDelta.from", /exchange 9 is not an earlier exchange/);
  await withLine4((delta) => ({ ...delta, from: 0 }));
  await rejects("requestDelta.from", /expected number to be >0|too small/i);
  await withLine4((delta) => ({ ...delta, keep: 5 }));
  await rejects("requestDelta.keep", /5 messages kept of exchange 2's request, which has 4/);
  await withLine4((delta) => ({ ...delta, from: 1, keep: 3 }));
  await rejects("requestDelta.keep", /3 messages kept of exchange 1's request, which has 2/);
  await withLine4((delta) => ({ ...delta, maxOutputTokens: 10, removed: ["maxOutputTokens"] }));
  await rejects("requestDelta.removed", /maxOutputTokens is both given and removed/);

  await writeFile(path, [JSON.stringify({ ...HEADER, cassette: 1 }), ...lines].join("\n") + "\n");
  await assert.rejects(readCassette(path), (err: unknown) => err instanceof CassetteFileError && err.message === `${path}: line 3, field requestDelta: a version-1 cassette stores every request whole`);
  await writeFile(path, [header, lines[0], JSON.stringify({ ...JSON.parse(lines[1]!), request: step(2).request })].join("\n") + "\n");
  await assert.rejects(readCassette(path), (err: unknown) => err instanceof CassetteFileError && err.message.startsWith(`${path}: line 3, field `) && /request/.test(err.message), "a request and a delta on one line");
  // A torn last line is still left out, a delta or not.
  await writeFile(path, [header, lines[0], lines[1], lines[2]!.slice(0, 60)].join("\n"));
  assert.deepEqual((await readCassette(path))?.exchanges.map((e) => e.request.messages.length), [2, 4]);
});
