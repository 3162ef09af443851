/**
 * Cassettes end to end (issue 25), through the built CLI and the official Anthropic SDK against
 * the local wire-protocol server: a run recorded with `--cassette`, then replayed with the server
 * stopped and no key — the same outcomes, the same model messages and usage, though the tool
 * (a real command printing a duration, a timestamp and its working folder) ran again. A recording
 * killed midway replays up to its last exchange and resumes; a changed tool description is a miss
 * that names it; hybrid mode asks the live server for the miss alone; each repeat replays its own
 * trial; the key, sent in a header and written in a prompt, is in no cassette.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { readFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { parseCassette, writeCassette } from "../../src/store/cassette-file.js";
import { requestHash } from "../../src/providers/cassette-request.js";
import type { CassetteExchange } from "../../src/core/cassette-exchange.js";
import { cliEnv, runCli, startCli } from "../support/cli.js";
import { FakeAnthropicServer, type FakeAnthropicReply } from "../support/fake-anthropic-server.js";
import { FakeOpenAIServer } from "../support/fake-openai-server.js";
import { repoRoot } from "../support/paths.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";

const KEY = "sk-ant-api03-cassette-secret-0123456789abcdef";
const POLICY = "version: 1\ndefault: allow\nrules: []\n";
/** A real command whose output changes every run: a duration, an instant, the workspace's path. */
const COMMAND = `node -e "require('fs').writeFileSync('out.txt', 'done'); console.log('took ' + (Math.random() * 899 + 100).toFixed(3) + 'ms at ' + new Date().toISOString() + ' in ' + process.cwd())"`;

const task = (prompt: string, extra = "") => `prompt: ${prompt}
policy: ../policy.yaml
model: { provider: anthropic, name: claude-test }
${extra}checks:
  - { name: wrote, run: "test -f out.txt" }
`;

const toolCall = (id: string): FakeAnthropicReply => ({
  kind: "stream", blocks: [{ type: "text", text: "Running it." }, { type: "tool_use", id, name: "shell", input: { command: COMMAND } }],
  usage: { input_tokens: 900, cache_creation_input_tokens: 1200, output_tokens: 40 },
});
const finalSay = (text: string): FakeAnthropicReply => ({
  kind: "stream", blocks: [{ type: "text", text }], usage: { input_tokens: 150, cache_read_input_tokens: 1200, output_tokens: 12 },
});

const liveEnv = (server: FakeAnthropicServer) => cliEnv({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.baseUrl });
/** No key, no base URL: a strict replay needs neither. */
const offlineEnv = () => {
  const env = cliEnv();
  for (const name of ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"]) delete env[name];
  return env;
};

async function cassetteFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)).sort();
}

/** What a trial's session says the model said, and what it was billed: the parts a replay must repeat byte for byte. */
async function modelSide(out: string, trial: string): Promise<unknown> {
  const session = JSON.parse(await readFile(join(out, "tasks", trial, "session.json"), "utf8")) as { messages: { role: string; content: unknown }[] };
  return session.messages.filter((m) => m.role === "assistant");
}

/** The billed figures a replay repeats: what the provider reported, not what rhema estimated (tool output differs). */
const BILLED = ["requests", "inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens", "cacheHitRate", "costUsd"] as const;
const billed = (stats: Record<string, unknown> | null) => (stats === null ? null : Object.fromEntries(BILLED.map((k) => [k, stats[k]])));

/** A trial's session.json with the fields a replay may not repeat named and blanked: `id`, the run directory, and the command's duration and instant. */
async function sessionApartFrom(out: string): Promise<unknown> {
  const text = await readFile(join(out, "tasks/suite/write/default/1/session.json"), "utf8");
  const session = JSON.parse(text.split(out).join("<run>").replace(/took [\d.]+ms at [\dT:.Z-]+/g, "took <duration> at <instant>")) as Record<string, unknown>;
  return { ...session, id: "<id>" };
}

async function outcomes(out: string) {
  return (await readRunResults(out)).map((r) => ({
    trial: `${r.suite}/${r.id}#${r.trial?.repeat ?? 1}`, status: r.status, steps: r.steps, finalAnswer: r.finalAnswer,
    checks: r.checks.map((c) => [c.name, c.passed]), billed: billed(r.stats as Record<string, unknown> | null),
  })).sort((a, b) => a.trial.localeCompare(b.trial));
}

test("a run recorded through the SDK replays with the server stopped and no key: the same outcomes, model messages and billed usage; the key is in no cassette", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": POLICY, "suite/write.yaml": task("Run the command."),
    "pricing.yaml": "version: 1\nmodels:\n  - { provider: anthropic, model: claude-test, inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 }\n",
  });
  // The model says the key back: its answer is recorded redacted, as every store keeps it.
  server.reply(toolCall("toolu_1"), finalSay(`Wrote out.txt with ${KEY}.`));
  const cassettes = join(root, "cassettes");
  const live = await runCli(["run", "suite", "--sandbox", "off", "--pricing", "pricing.yaml", "--out", join(root, "live"), "--cassette", cassettes], { cwd: root, env: liveEnv(server) });
  assert.equal(live.code, 0, live.stderr);
  assert.match(live.stderr + live.stdout, /recording each trial's model exchanges/);
  assert.equal(server.requests.length, 2);
  assert.ok(server.requests.every((r) => JSON.stringify(r.headers).includes(KEY)), "the SDK sent the key in a header");

  const [file, ...more] = await cassetteFiles(cassettes);
  assert.deepEqual(more, []);
  assert.equal(file, join(cassettes, "suite/write/default/1.jsonl"));
  const text = await readFile(file!, "utf8");
  assert.ok(!text.includes(KEY), "the key is in no cassette");
  assert.ok(!text.includes(root), "no absolute run path is in the cassette");
  const cassette = parseCassette(file!, text);
  assert.equal(cassette.exchanges.length, 2);
  for (const rule of ["duration", "timestamp", "workspace path"]) assert.ok(cassette.exchanges[1]!.normalised.includes(rule), `request 2 normalised its ${rule}: ${cassette.exchanges[1]!.normalised.join(", ")}`);

  // `rhema cassette show` reads it for people, and as JSON.
  const shown = await runCli(["cassette", "show", file!], { cwd: root, env: offlineEnv() });
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /anthropic claude-test, recorded .*, 2 exchanges\n#1 sha256:[0-9a-f]{12}…  1 messages, \d+ tools; in 900, cache read 0, cache write 1200, out 40; \d+ ms/);
  assert.match(shown.stdout, /answered: shell \{"command":"node -e/);
  assert.match(shown.stdout, /#2 [^\n]*\n  made stable: [^\n]*duration[^\n]*\n  asked: {4}user: \[tool_result\] took <duration> at <timestamp> in <workspace>/);
  assert.ok(!shown.stdout.includes(KEY));
  const asJson = await runCli(["cassette", "show", file!, "--json"], { cwd: root, env: offlineEnv() });
  assert.deepEqual(JSON.parse(asJson.stdout).exchanges.map((e: { exchange: number }) => e.exchange), [1, 2]);
  const none = await runCli(["cassette", "show", join(root, "no-such.jsonl")], { cwd: root, env: offlineEnv() });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /no-such\.jsonl: no such cassette/);

  await server.close();
  const replay = await runCli(["run", "suite", "--sandbox", "off", "--pricing", "pricing.yaml", "--out", join(root, "redo"), "--cassette", cassettes], { cwd: root, env: offlineEnv() });
  assert.equal(replay.code, 0, replay.stderr);
  assert.match(replay.stderr + replay.stdout, /answering every model request from/);
  // Its cost is the recording's, marked replayed: no money was spent on it.
  const [liveCost, replayCost] = await Promise.all(["live", "redo"].map(async (d) => (await readRunResults(join(root, d)))[0]?.cost));
  assert.ok((liveCost?.usd ?? 0) > 0, JSON.stringify(liveCost));
  assert.equal(replayCost?.usd, liveCost?.usd);
  assert.equal(liveCost?.replayed, undefined);
  assert.equal(replayCost?.replayed, true);
  assert.match(replay.stdout + replay.stderr, /\$0\.\d+ \(replayed\)/);
  assert.match(await readFile(join(root, "redo", "summary.md"), "utf8"), /replayed: answered from cassettes/);
  // The replay compares with its recording: nothing regressed, nothing changed.
  const compared = await runCli(["report", "compare", join(root, "live"), join(root, "redo"), "--format", "json"], { cwd: root, env: offlineEnv() });
  assert.equal(compared.code, 0, compared.stderr);
  const comparison = JSON.parse(compared.stdout) as { counts: { regressed: number; removed: number }; rows: Array<{ base: { passes: number }; head: { passes: number } }> };
  assert.deepEqual([comparison.counts.regressed, comparison.counts.removed, comparison.rows.length], [0, 0, 1]);
  assert.equal(comparison.rows[0]!.head.passes, comparison.rows[0]!.base.passes);
  assert.deepEqual(await outcomes(join(root, "redo")), await outcomes(join(root, "live")));
  assert.deepEqual(await modelSide(join(root, "redo"), "suite/write/default/1"), await modelSide(join(root, "live"), "suite/write/default/1"));
  // (The replay's folder is named as long as the recording's: the paths in the tool's output count the same tokens.)
  // The whole session file alike, but for a named list: its id, the run directory in its paths, and
  // what the tool printed that changes every run (the duration and the instant). Its creation time
  // is the recording's: the replay's session begins when the recorded trial did.
  assert.deepEqual(await sessionApartFrom(join(root, "redo")), await sessionApartFrom(join(root, "live")));
  const [liveStats, replayStats] = await Promise.all(["live", "redo"].map(async (d) => JSON.parse(await readFile(join(root, d, "stats.json"), "utf8")).total.stats));
  assert.deepEqual(billed(replayStats), billed(liveStats));
  assert.equal(liveStats.cacheReadTokens, 1200, "the recorded usage is the server's");

  // `--cassette-usage simulate`: the same replay, its usage the cache simulator's (not the
  // server's), its cost marked simulated as well as replayed; a recording cannot simulate.
  const simulate = await runCli(["run", "suite", "--sandbox", "off", "--pricing", "pricing.yaml", "--out", join(root, "sim"), "--cassette", cassettes, "--cassette-usage", "simulate"], { cwd: root, env: offlineEnv() });
  assert.equal(simulate.code, 0, simulate.stderr);
  const unbilled = async (out: string) => (await outcomes(out)).map(({ billed: _billed, ...rest }) => rest);
  assert.deepEqual(await unbilled(join(root, "sim")), await unbilled(join(root, "live")));
  const simStats = JSON.parse(await readFile(join(root, "sim", "stats.json"), "utf8")).total.stats;
  assert.notDeepEqual(billed(simStats), billed(liveStats), "the simulator's figures, not the recorded ones");
  assert.equal(simStats.outputTokens, liveStats.outputTokens, "the recorded output is kept");
  const [simCost] = (await readRunResults(join(root, "sim"))).map((r) => r.cost);
  assert.deepEqual([simCost?.simulated, simCost?.replayed], [true, true]);
  assert.match(simulate.stdout + simulate.stderr, /\$0\.\d+ \(simulated; replayed\)/);
  const recordSimulated = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "nope"), "--cassette", join(root, "fresh"), "--cassette-usage", "simulate"], { cwd: root, env: offlineEnv() });
  assert.equal(recordSimulated.code, 2);
  assert.match(recordSimulated.stderr, /--cassette-usage simulate is for a replay/);
});

test("a recording killed between exchanges replays up to its last one, then resumes recording; the whole cassette then replays", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": POLICY, "suite/write.yaml": task("Run the command.") });
  const cassettes = join(root, "cassettes");
  const out = join(root, "live");
  // The second request's answer never ends: the CLI is killed while it waits.
  server.reply(toolCall("toolu_1"), { kind: "stream", blocks: [{ type: "text", text: "Almost" }], hangAfterFrames: 2 });
  const run = startCli(["run", "suite", "--sandbox", "off", "--out", out, "--cassette", cassettes], { cwd: root, env: liveEnv(server), detached: true });
  await waitFor(async () => server.requests.length === 2);
  process.kill(-run.child.pid!, "SIGKILL");
  await run.done;
  const file = join(cassettes, "suite/write/default/1.jsonl");
  const kept = parseCassette(file, await readFile(file, "utf8"));
  assert.equal(kept.exchanges.length, 1, "the exchange the kill cut is not in the cassette");

  // What was kept replays: the first request is answered, the second has no recorded answer.
  const partial = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "partial"), "--cassette", cassettes], { cwd: root, env: offlineEnv() });
  assert.equal(partial.code, 1, partial.stderr);
  const [missed] = await readRunResults(join(root, "partial"));
  assert.equal(missed!.status, "errored");
  assert.equal(missed!.error?.code, "cassette_miss");
  assert.match(missed!.error!.message, /no recorded answer for request 2.*holds no more exchanges \(1 recorded, all used\)/s);

  // The recording resumes (its mode said: the folder holds a cassette now) and continues the file.
  server.reply(finalSay("Wrote out.txt."));
  const resumed = await runCli(["run", "suite", "--sandbox", "off", "--out", out, "--cassette", cassettes, "--cassette-mode", "record"], { cwd: root, env: liveEnv(server) });
  assert.equal(resumed.code, 0, resumed.stderr);
  const whole = parseCassette(file, await readFile(file, "utf8"));
  assert.equal(whole.exchanges.length, 2);
  assert.equal(whole.header.recordedAt, kept.header.recordedAt, "the resumed recording continued its cassette");

  await server.close();
  const replay = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "replay"), "--cassette", cassettes], { cwd: root, env: offlineEnv() });
  assert.equal(replay.code, 0, replay.stderr);
  assert.deepEqual(await outcomes(join(root, "replay")), await outcomes(out));
});

test("a changed tool description is a miss naming the tool spec; hybrid mode asks the live server for the miss alone and says so; a prune keeps what the replay used", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": POLICY, "suite/write.yaml": task("Run the command.") });
  const cassettes = join(root, "cassettes");
  server.reply(toolCall("toolu_1"), finalSay("Wrote out.txt."));
  const live = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "live"), "--cassette", cassettes], { cwd: root, env: liveEnv(server) });
  assert.equal(live.code, 0, live.stderr);

  // The shell tool's description as it was when recorded, in the second request only: as if
  // rhema's description changed between the recording and the replay, and the model's first
  // answer came from the part of the cassette the change did not reach.
  const file = join(cassettes, "suite/write/default/1.jsonl");
  const recording = parseCassette(file, await readFile(file, "utf8"));
  const [first, second] = recording.exchanges as [CassetteExchange, CassetteExchange];
  const shell = second.request.tools.findIndex((tool) => (tool as { name: string }).name === "shell");
  assert.ok(shell >= 0);
  const older = { ...second.request, tools: second.request.tools.map((tool, i) => (i === shell ? { ...(tool as object), description: "An older description of the shell tool." } : tool)) };
  await writeCassette(file, recording.header, [first, { ...second, request: older, hash: requestHash(older) }]);

  const strict = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "strict"), "--cassette", cassettes, "--cassette-mode", "strict"], { cwd: root, env: offlineEnv() });
  assert.equal(strict.code, 1, strict.stderr);
  const [missed] = await readRunResults(join(root, "strict"));
  assert.equal(missed!.error?.code, "cassette_miss");
  assert.match(missed!.error!.message, new RegExp(`differs first at tools\\[${shell}\\]\\.description:\\n  recorded:  An older description of the shell tool\\.`));

  // The strict replay used exchange 1 only: a prune of what it used drops exchange 2 (a dry run first, which writes nothing).
  const use = JSON.parse(await readFile(join(root, "strict/tasks/suite/write/default/1/cassette-used.json"), "utf8"));
  assert.deepEqual(use.used, [1]);
  assert.deepEqual({ ...use.miss, detail: undefined }, { request: 2, hash: requestHash(second.request), detail: undefined, wentLive: false }, "the miss is kept: request 2, by its hash as requested now");
  const edited = await readFile(file, "utf8");
  const dry = await runCli(["cassette", "prune", cassettes, "--runs", join(root, "strict"), "--dry-run"], { cwd: root, env: offlineEnv() });
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /suite\/write\/default\/1\.jsonl: would keep 1 of 2 exchanges/);
  assert.equal(await readFile(file, "utf8"), edited, "a dry run writes nothing");
  const notRun = await runCli(["cassette", "prune", cassettes, "--runs", join(root, "nowhere")], { cwd: root, env: offlineEnv() });
  assert.equal(notRun.code, 2);
  assert.match(notRun.stderr, /nowhere: not a run directory/);

  const before = server.requests.length;
  server.reply(finalSay("Wrote out.txt, live."));
  const hybrid = await runCli(["run", "suite", "--sandbox", "off", "--json", "--out", join(root, "hybrid"), "--cassette", cassettes, "--cassette-mode", "hybrid"], { cwd: root, env: liveEnv(server) });
  assert.equal(hybrid.code, 0, hybrid.stderr);
  assert.equal(server.requests.length - before, 1, "only the request that missed went to the server");
  const lines2 = hybrid.stdout.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  const said = lines2.filter((l) => l.type === "task_event" && l.event.type === "cassette_live");
  assert.equal(said.length, 1);
  assert.match(said[0].event.reason, /tools\[\d+\]\.description.*go to the live model/s);
  const validate = eventsValidator();
  for (const line of lines2) assert.ok(validate(line), JSON.stringify(validate.errors?.slice(0, 3)));
  assert.equal(parseCassette(file, await readFile(file, "utf8")).exchanges.length, 2, "hybrid stores nothing");
  // `cassette show --runs` says what each replay did with the cassette: used, and where it missed.
  const shown = await runCli(["cassette", "show", file, "--runs", join(root, "strict"), join(root, "hybrid"), join(root, "live")], { cwd: root, env: offlineEnv() });
  assert.equal(shown.code, 0, shown.stderr);
  const replays = shown.stdout.slice(shown.stdout.indexOf("replay in"));
  assert.match(replays, new RegExp(`^replay in [^\n]*strict: used exchange #1\n  missed request 2 \\(sha256:[0-9a-f]{12}…\\), which failed the trial:\n    no recorded answer for request 2 [^\n]*differs first at tools\\[${shell}\\]\\.description:\n    recorded:  An older`));
  assert.match(replays, /replay in [^\n]*hybrid: used exchange #1\n  missed request 2 [^\n]*, which and the rest of the trial went live:/);
  assert.match(replays, /replay in [^\n]*live: did not replay this cassette$/m);
  const shownJson = JSON.parse((await runCli(["cassette", "show", file, "--json", "--runs", join(root, "strict")], { cwd: root, env: offlineEnv() })).stdout);
  assert.deepEqual(shownJson.replays.map((r: { use: { used: number[]; miss: { request: number } } }) => [r.use.used, r.use.miss.request]), [[[1], 2]]);
  const pruned = await runCli(["cassette", "prune", cassettes, "--runs", join(root, "strict")], { cwd: root, env: offlineEnv() });
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.match(pruned.stdout, /pruned 1 cassette: 1 exchange dropped/);
  const left = parseCassette(file, await readFile(file, "utf8"));
  assert.deepEqual(left.exchanges.map((e) => [e.exchange, e.hash]), [[1, first.hash]]);
  assert.equal((await stat(file)).mode & 0o777, 0o600);
});

test("each repeat replays its own recorded trial", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": POLICY, "suite/write.yaml": task("Run the command.", "repeats: 3\n") });
  const cassettes = join(root, "cassettes");
  // The same request each time; three different answers, one per trial (run one at a time, in order).
  for (const word of ["alpha", "beta", "gamma"]) server.reply(toolCall(`toolu_${word}`), finalSay(`Answer ${word}.`));
  const live = await runCli(["run", "suite", "--sandbox", "off", "--concurrency", "1", "--out", join(root, "live"), "--cassette", cassettes], { cwd: root, env: liveEnv(server) });
  assert.equal(live.code, 0, live.stderr);
  assert.equal((await cassetteFiles(cassettes)).length, 3);
  await server.close();
  // Replayed in another order (all at once): each trial still gets its own answers.
  const replay = await runCli(["run", "suite", "--sandbox", "off", "--concurrency", "3", "--out", join(root, "replay"), "--cassette", cassettes], { cwd: root, env: offlineEnv() });
  assert.equal(replay.code, 0, replay.stderr);
  for (const n of [1, 2, 3]) {
    const trial = `suite/write/default/${n}`;
    const [recorded, replayed] = await Promise.all(["live", "replay"].map((d) => readFile(join(root, d, "tasks", trial, "final-answer.txt"), "utf8").catch(() => null)));
    assert.match(recorded ?? "", /Answer (alpha|beta|gamma)\./, `trial ${n}`);
    assert.equal(replayed, recorded, `trial ${n} replayed its own answers`);
  }
});

test("the OpenAI provider records and replays too, through its SDK", async (t) => {
  const server = await FakeOpenAIServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": POLICY,
    "suite/write.yaml": task("Run the command.").replace("model: { provider: anthropic, name: claude-test }", "model: { provider: openai, name: gpt-test }"),
  });
  server.reply(
    { kind: "stream", text: "Running it.", toolCalls: [{ id: "call_1", name: "shell", arguments: { command: COMMAND } }], usage: { prompt_tokens: 900, completion_tokens: 30, cached_tokens: 0 } },
    { kind: "stream", text: "Wrote out.txt.", usage: { prompt_tokens: 1000, completion_tokens: 8, cached_tokens: 896 } },
  );
  const cassettes = join(root, "cassettes");
  const env = cliEnv({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.baseUrl });
  const live = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "live"), "--cassette", cassettes], { cwd: root, env });
  assert.equal(live.code, 0, live.stderr);
  assert.equal(server.requests.length, 2);
  await server.close();
  const replay = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "replay"), "--cassette", cassettes], { cwd: root, env: offlineEnv() });
  assert.equal(replay.code, 0, replay.stderr);
  assert.deepEqual(await outcomes(join(root, "replay")), await outcomes(join(root, "live")));
  const [cassette] = await cassetteFiles(cassettes);
  assert.equal(parseCassette(cassette!, await readFile(cassette!, "utf8")).header.provider, "openai");

  // The same task with the recording as its model (`model: { provider: cassette, path }`, through
  // the registry): no --cassette, no key; the path a folder of cassettes or one cassette file.
  const asModel = join(root, "as-model");
  const withPath = (path: string) => task("Run the command.").replace("model: { provider: anthropic, name: claude-test }", `model: { provider: cassette, path: ${path} }`);
  for (const [path, out] of [["../../cassettes", "by-folder"], ["../../cassettes/suite/write/default/1.jsonl", "by-file"]] as const) {
    await writeFiles(asModel, { "policy.yaml": POLICY, "suite/write.yaml": withPath(path) });
    const byModel = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, out)], { cwd: asModel, env: offlineEnv() });
    assert.equal(byModel.code, 0, byModel.stderr);
    assert.deepEqual(await outcomes(join(root, out)), await outcomes(join(root, "live")), `model.path ${path}`);
    assert.equal((await readRunResults(join(root, out)))[0]!.cost?.replayed, true);
  }
  await writeFiles(asModel, { "suite/write.yaml": withPath("../../nowhere") });
  const missing = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "missing")], { cwd: asModel, env: offlineEnv() });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /write\.yaml: model\.path: \S*nowhere: no such folder or file/);
});

function eventsValidator() {
  const readJson = (rel: string): object => JSON.parse(readFileSync(join(repoRoot, rel), "utf8"));
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  ajv.addFormat("date-time", (text: string) => !Number.isNaN(Date.parse(text)));
  ajv.addSchema(readJson("schema/result.schema.json"), "result.schema.json");
  return ajv.compile(readJson("schema/events.schema.json"));
}

test("a task's cassette.normalise makes its own volatile output stable: without it the replay misses, with it the replay meets its recording", async (t) => {
  const root = await tempDir(t);
  // A scripted model (it records like any other) runs a command that prints a port of its own each run.
  const scripted = (normalise: string) => `prompt: Start it.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - call: shell
      input: { command: "node -e \\"require('fs').writeFileSync('out.txt', 'x'); console.log('listening on port ' + (10000 + Math.floor(Math.random() * 50000)))\\"" }
    - say: Started.
${normalise}checks:
  - { name: wrote, run: "test -f out.txt" }
`;
  await writeFiles(root, { "policy.yaml": POLICY, "plain/serve.yaml": scripted(""), "ruled/serve.yaml": scripted("cassette: { normalise: ['port \\d+'] }\n") });
  const cassettes = join(root, "cassettes");
  const live = await runCli(["run", "plain", "ruled", "--sandbox", "off", "--out", join(root, "live"), "--cassette", cassettes], { cwd: root, env: offlineEnv() });
  assert.equal(live.code, 0, live.stderr);
  const replay = await runCli(["run", "plain", "ruled", "--sandbox", "off", "--out", join(root, "replay"), "--cassette", cassettes], { cwd: root, env: offlineEnv() });
  const results = new Map((await readRunResults(join(root, "replay"))).map((r) => [r.suite, r]));
  assert.equal(results.get("ruled")?.status, "passed", JSON.stringify(results.get("ruled")?.error));
  assert.equal(results.get("plain")?.status, "errored");
  assert.match(results.get("plain")!.error!.message, /listening on port \d+/);
  assert.equal(replay.code, 1);
  const ruled = parseCassette(join(cassettes, "ruled/serve/default/1.jsonl"), await readFile(join(cassettes, "ruled/serve/default/1.jsonl"), "utf8"));
  assert.ok(ruled.exchanges[1]!.normalised.includes("cassette.normalise[0]"), ruled.exchanges[1]!.normalised.join(", "));

  // A pattern that matches the empty string is refused at its line, before anything runs.
  await writeFiles(root, { "bad/serve.yaml": scripted("cassette: { normalise: ['x*'] }\n") });
  const bad = await runCli(["run", "bad", "--sandbox", "off", "--out", join(root, "bad-run")], { cwd: root, env: offlineEnv() });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /serve\.yaml:\d+:\d+: cassette\.normalise\.0: \/x\*\/ matches the empty string/);
});

test("a compaction worker's requests are recorded beside the task's, marked, and replayed with no key", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  // The compaction benchmark's log-reading task, its summaries written by a worker on the fake server.
  const source = await readFile(join(repoRoot, "bench/compaction-live/triage/count-failures.yaml"), "utf8");
  const fixture = join(repoRoot, "bench/compaction-live/fixtures/service");
  const taskText = source
    .replace("workspace: { from: ../fixtures/service }", `workspace: { from: ${JSON.stringify(fixture)} }`)
    .replace("policy: ../policy.yaml", `policy: ${JSON.stringify(join(repoRoot, "bench/compaction-live/policy.yaml"))}`)
    .replace("limits: { maxSteps: 20 }", "limits: { maxSteps: 20 }\ntranscript: { budgetTokens: 6000, worker: { provider: anthropic, name: claude-worker-test } }");
  await writeFiles(root, { "triage/count-failures.yaml": taskText });
  for (let i = 0; i < 40; i++) server.reply(finalSay(`Summary ${i}: lines read so far; failed captures counted as they appear.`));
  const cassettes = join(root, "cassettes");
  const live = await runCli(["run", "triage", "--sandbox", "off", "--out", join(root, "live"), "--cassette", cassettes], { cwd: root, env: liveEnv(server) });
  assert.equal(live.code, 0, live.stderr);
  const file = join(cassettes, "triage/count-failures/default/1.jsonl");
  const cassette = parseCassette(file, await readFile(file, "utf8"));
  const workers = cassette.exchanges.filter((e) => e.who === "worker");
  assert.ok(server.requests.length > 0 && workers.length === server.requests.length, `every worker request recorded: ${workers.length} of ${server.requests.length}`);
  assert.ok(workers.every((e) => e.request.provider === "anthropic" && e.request.model === "claude-worker-test"));
  assert.ok(cassette.exchanges.some((e) => e.who === undefined), "the task's own exchanges beside them");

  await server.close();
  const replay = await runCli(["run", "triage", "--sandbox", "off", "--out", join(root, "redo"), "--cassette", cassettes], { cwd: root, env: offlineEnv() });
  assert.equal(replay.code, 0, replay.stderr);
  const [a, b] = await Promise.all(["live", "redo"].map(async (d) => (await readRunResults(join(root, d)))[0]!.stats));
  assert.deepEqual([b?.flushes, b?.workerRequests, b?.workerInputTokens], [a?.flushes, a?.workerRequests, a?.workerInputTokens]);
  assert.ok((a?.flushes ?? 0) > 0);
});
