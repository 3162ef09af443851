/** A cassette on disk: written an exchange at a time (0600), read back; a kill's torn line left out and cut off when the recording continues; a damaged line named by file, line and field. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFile, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { Ajv2020 } from "ajv/dist/2020.js";
import { CassetteFileError, CassetteWriter, cassetteJsonSchema, readCassette } from "../../src/store/cassette-file.js";
import { repoRoot } from "../support/paths.js";
import type { CassetteExchange } from "../../src/core/cassette-exchange.js";
import { tempDir } from "../support/temp-dir.js";

const HEADER = { cassette: 1 as const, provider: "anthropic", model: "claude-sonnet-4-5", recordedAt: "2026-12-03T14:00:00.000Z" };

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
  await writeFile(path, [JSON.stringify({ ...HEADER, cassette: 2 })].join("\n") + "\n");
  await assert.rejects(readCassette(path), /line 1, field cassette/);
  assert.match(await readFile(path, "utf8"), /"cassette":2/, "reading never rewrites");
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
  await writer.append(exchange("one"));
  await writer.append({ ...exchange("summary"), who: "worker" });
  await writer.close();
  const validate = new Ajv2020({ strict: false }).addFormat("date-time", (s: string) => !Number.isNaN(Date.parse(s))).compile(committed);
  const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
  assert.equal(lines.length, 3);
  for (const line of lines) assert.ok(validate(JSON.parse(line)), JSON.stringify(validate.errors));
  assert.ok(!validate({ ...JSON.parse(lines[1]!), who: "someone" }), "an unknown field value is refused");
});
