/**
 * A trial's cassette across processes (real files): a replay resumed after a kill answers
 * identical requests in their recorded order — it goes on after the exchanges the earlier run used
 * (cassette-used.json) — and answers again the request whose answer the kill cut before its
 * boundary was committed; a record of another start of the trial is not this one's; the first miss
 * is kept for `cassette show`. And the one finder of cassettes under a folder.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ModelProvider, ModelRequest, Usage } from "../../../src/core/provider.js";
import { cassetteFilesUnder, openTrialCassette, type CassetteMode, type CassetteUsage, type TrialCassetteContext } from "../../../src/runner/execute/trial-cassette.js";
import { PromptCacheSimulator } from "../../../src/cache/prompt-cache-simulator.js";
import { readCassetteUse } from "../../../src/runner/run-dir/cassette-use.js";
import { readCassette, writeCassette } from "../../../src/store/cassette-file.js";
import { tempDir } from "../../support/temp-dir.js";

const KEY = { suite: "s", id: "t", variant: null, repeat: 1 };
const STARTED = "2026-12-04T10:00:00.000Z";

/** A model that answers the n-th request it gets with "answer n": identical requests get different answers. */
function countingModel(): ModelProvider & { asked: number } {
  const model = {
    id: "scripted",
    asked: 0,
    async *stream() {
      model.asked += 1;
      yield { type: "text" as const, delta: `answer ${model.asked}` };
      yield { type: "usage" as const, usage: { inputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 3 } };
      yield { type: "stop" as const, reason: "end_turn" as const };
    },
  };
  return model;
}

function req(texts: string[]): ModelRequest {
  return {
    system: "Work.", tools: [], cacheBreakpoints: [],
    messages: texts.map((text, i) => ({ role: i % 2 === 0 ? "user" as const : "assistant" as const, content: [{ type: "text" as const, text }] })),
  };
}

/** Request 1, then request 2 twice (a conversation that asks the same thing again). */
const REQUESTS = [req(["go"]), req(["go", "first", "again"]), req(["go", "first", "again"])];

async function ask(provider: ModelProvider, request: ModelRequest, usages: Usage[] = []): Promise<string> {
  let text = "";
  for await (const e of provider.stream(request, new AbortController().signal)) {
    if (e.type === "text") text += e.delta;
    if (e.type === "usage") usages.push(e.usage);
  }
  return text;
}

function context(dir: string, trialStartedAt = STARTED): TrialCassetteContext {
  return {
    key: KEY, trialStartedAt, workspace: join(dir, "run/ws"), runDir: join(dir, "run"), usedFile: join(dir, "run/cassette-used.json"),
    redact: (text) => text, now: () => new Date(STARTED), onLive: () => {},
  };
}

/** One process's use of the trial's cassette: `asked` sent in order, the answers returned. */
async function session(dir: string, mode: CassetteMode, asked: readonly ModelRequest[], opts: { live?: ModelProvider; trialStartedAt?: string; usage?: CassetteUsage; usages?: Usage[] } = {}): Promise<string[]> {
  const cassette = openTrialCassette({ dir: join(dir, "cassettes"), mode, ...(opts.usage ? { usage: opts.usage } : {}) }, context(dir, opts.trialStartedAt));
  const provider = cassette.wrap(opts.live ?? countingModel());
  const answers: string[] = [];
  try {
    for (const request of asked) answers.push(await ask(provider, request, opts.usages));
  } finally {
    await cassette.close();
  }
  return answers;
}

async function recorded(t: Parameters<typeof tempDir>[0]): Promise<string> {
  const dir = await tempDir(t);
  await mkdir(join(dir, "run"), { recursive: true });
  assert.deepEqual(await session(dir, "record", REQUESTS), ["answer 1", "answer 2", "answer 3"]);
  return dir;
}

test("a replay resumed after a kill answers the repeated request with the next recorded answer, not the one the earlier run used", async (t) => {
  const dir = await recorded(t);
  assert.deepEqual(await session(dir, "strict", REQUESTS.slice(0, 2)), ["answer 1", "answer 2"], "the first run is killed after two requests");
  assert.deepEqual(await session(dir, "strict", REQUESTS.slice(2)), ["answer 3"], "the resumed run asks the third: the second request's twin");
  assert.deepEqual((await readCassetteUse(join(dir, "run/cassette-used.json")))?.used, [1, 2, 3]);
});

test("a resumed replay answers again the request a kill cut before its answer was committed", async (t) => {
  const dir = await recorded(t);
  assert.deepEqual(await session(dir, "strict", REQUESTS.slice(0, 1)), ["answer 1"]);
  assert.deepEqual(await session(dir, "strict", REQUESTS), ["answer 1", "answer 2", "answer 3"], "request 1 again: its recorded answer, not a miss");
});

test("a record of another start of the trial (a retry made afresh) does not move the replay on", async (t) => {
  const dir = await recorded(t);
  assert.deepEqual(await session(dir, "strict", REQUESTS.slice(0, 2)), ["answer 1", "answer 2"]);
  assert.deepEqual(await session(dir, "strict", REQUESTS, { trialStartedAt: "2026-12-04T11:00:00.000Z" }), ["answer 1", "answer 2", "answer 3"]);
  assert.equal((await readCassetteUse(join(dir, "run/cassette-used.json")))?.trialStartedAt, "2026-12-04T11:00:00.000Z");
});

test("the trial's first miss is recorded with where it differs and whether the trial went live", async (t) => {
  const dir = await recorded(t);
  const changed = req(["go", "first", "something else"]);
  const live = countingModel();
  assert.deepEqual(await session(dir, "hybrid", [REQUESTS[0]!, changed, REQUESTS[2]!], { live }), ["answer 1", "answer 1", "answer 2"], "from the miss on, the live model answers");
  assert.equal(live.asked, 2);
  const use = await readCassetteUse(join(dir, "run/cassette-used.json"));
  assert.deepEqual(use?.used, [1]);
  assert.equal(use?.miss?.request, 2);
  assert.equal(use?.miss?.wentLive, true);
  assert.match(use?.miss?.detail ?? "", /differs first at messages\[2\]/);
});

test("--cassette-usage simulate: each replayed answer's usage is the cache simulator's for the request, the recorded output kept", async (t) => {
  const dir = await recorded(t);
  const recordedUsages: Usage[] = [];
  await session(dir, "strict", REQUESTS, { usages: recordedUsages });
  assert.deepEqual(recordedUsages.map((u) => [u.inputTokens, u.outputTokens]), [[7, 3], [7, 3], [7, 3]], "as recorded");
  const simulated: Usage[] = [];
  // Another run directory: a fresh record of use.
  await mkdir(join(dir, "run2"), { recursive: true });
  const cassette = openTrialCassette({ dir: join(dir, "cassettes"), mode: "strict", usage: "simulate" }, { ...context(dir), usedFile: join(dir, "run2/cassette-used.json") });
  const provider = cassette.wrap(countingModel());
  for (const request of REQUESTS) await ask(provider, request, simulated);
  await cassette.close();
  const simulator = new PromptCacheSimulator({ rules: "anthropic" });
  const expected = REQUESTS.map((request) => ({ ...simulator.observe(request, Date.parse(STARTED)), outputTokens: 3 }));
  assert.deepEqual(simulated, expected);
  assert.notDeepEqual(simulated, recordedUsages);
});

test("--cassette-usage simulate: the simulator's clock adds the model time the recording spent, so a long recorded answer lets the cache expire", async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, "run"), { recursive: true });
  // A prompt long enough to cache (over 1,024 tokens), marked for caching.
  const long = (texts: string[]): ModelRequest => ({ ...req(texts), system: "Work. ".repeat(1_500), cacheBreakpoints: [0] });
  const asked = [long(["go"]), long(["go", "first", "again"])];
  await session(dir, "record", asked);
  // The first answer took the model ten minutes: longer than the five-minute cache.
  const file = join(dir, "cassettes/s/t/default/1.jsonl");
  const recording = (await readCassette(file))!;
  await writeCassette(file, recording.header, recording.exchanges.map((e, i) => ({ ...e, timing: { firstEventMs: 0, totalMs: i === 0 ? 600_000 : 10 } })));
  const simulated: Usage[] = [];
  await session(dir, "strict", asked, { usage: "simulate", usages: simulated });
  const at = Date.parse(STARTED);
  const expire = new PromptCacheSimulator({ rules: "anthropic" });
  assert.deepEqual(simulated, [expire.observe(asked[0]!, at), expire.observe(asked[1]!, at + 600_000)].map((u) => ({ ...u, outputTokens: 3 })));
  assert.equal(simulated[1]!.cacheReadTokens, 0, "the cache written by request 1 expired during its recorded answer");
  const kept = new PromptCacheSimulator({ rules: "anthropic" });
  assert.ok(kept.observe(asked[0]!, at).cacheWriteTokens > 0 && kept.observe(asked[1]!, at + 10).cacheReadTokens > 0, "without the recorded time, request 2 would read the cache");
});

test("cassettes are found at a trial's depth only, sorted, and the search stops at the limit", async (t) => {
  const dir = await tempDir(t);
  const files = ["b/t/default/1.jsonl", "a/t/default/2.jsonl", "a/t/default/1.jsonl", "a/t/cell/1.jsonl"];
  for (const file of [...files, "a/t/default/notes.txt", "a/t/default/deeper/1.jsonl", "a/t/1.jsonl", "top.jsonl"]) {
    await mkdir(join(dir, file, ".."), { recursive: true });
    await writeFile(join(dir, file), "");
  }
  assert.deepEqual(await cassetteFilesUnder(dir), files.map((f) => join(dir, f)).sort());
  assert.equal((await cassetteFilesUnder(dir, 1)).length, 1);
  assert.deepEqual(await cassetteFilesUnder(join(dir, "none")).catch((err: NodeJS.ErrnoException) => err.code), "ENOENT");
});
