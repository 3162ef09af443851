import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadTokenizerCounter } from "../../src/tokens/tokenizer-counter.js";
import { calibrationId, formatCalibration, parseCalibration } from "../../src/tokens/calibration-file.js";
import { corpusDir } from "../support/paths.js";
import { billedFixture } from "../support/calibration-fixture.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/temp-dir.js";

test("bench calibrate fits a samples file, writes the calibration file and prints the fit and held-out errors", async (t) => {
  const dir = await tempDir(t);
  const samples = billedFixture(await loadTokenizerCounter("o200k_base"));
  await writeFile(join(dir, "samples.jsonl"), samples.map((s) => JSON.stringify(s)).join("\n") + "\n");
  const r = await runCli(["bench", "calibrate", "samples.jsonl", "--out", "cal.json"], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const file = parseCalibration(await readFile(join(dir, "cal.json"), "utf8"), "cal.json");
  assert.match(file.fittedFrom, /samples\.jsonl: 48 requests of 8 sessions/);
  assert.equal(file.fit?.sessions, 8);
  assert.equal(file.fit?.heldOut?.folds, 5);
  assert.match(r.stdout, /^calibration: 48 requests of 8 sessions$/m);
  assert.match(r.stdout, /^fit error \(requests fitted, each session's first left out\): aggregate [+-]\d+\.\d %, mean per request \d+\.\d % \(40 requests\)$/m);
  assert.match(r.stdout, /^held-out error \(5-fold by session\): aggregate [+-]\d+\.\d %, mean per request \d+\.\d % \(40 requests\)$/m);
  assert.match(r.stdout, /^chars\/4 on the same requests: aggregate/m);
  assert.match(r.stdout, new RegExp(`wrote .*cal\\.json \\(${file.id}\\)`));
});

test("bench calibrate refuses a bad samples line naming it, and inputs with nothing to fit, with exit 2", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "bad.jsonl"), `${JSON.stringify({ session: "a", system: null, tools: [], messages: [], billed: { inputTokens: -1, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 } })}\n`);
  const bad = await runCli(["bench", "calibrate", "bad.jsonl", "--out", "cal.json"], { cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /bad\.jsonl:1: field "billed\.inputTokens"/);
  await writeFile(join(dir, "one.jsonl"), `${JSON.stringify({ session: "a", system: null, tools: [], messages: [], billed: { inputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 } })}\n`);
  const one = await runCli(["bench", "calibrate", "one.jsonl", "--out", "cal.json"], { cwd: dir });
  assert.equal(one.code, 2);
  assert.match(one.stderr, /no session has two requests/);
});

test("bench replay --calibration counts with the file's factors and names the counter", async (t) => {
  const dir = await tempDir(t);
  const factors = { perChar: { prose: 0.4, code: 0.5, json: 0.5, tool_result: 0.45 }, perMessage: 4, perToolBlock: 4 };
  await writeFile(join(dir, "cal.json"), formatCalibration({ version: 1, fittedFrom: "test", factors, fit: null }));
  const input = join(corpusDir, "ledger-totals.jsonl");
  const plain = await runCli(["bench", "replay", input, "--budget", "8000", "--strategy", "sections", "--json"], { cwd: dir });
  const calibrated = await runCli(["bench", "replay", input, "--budget", "8000", "--strategy", "sections", "--calibration", "cal.json", "--json"], { cwd: dir });
  assert.equal(calibrated.code, 0, calibrated.stderr);
  const peak = (r: { stdout: string }) => (JSON.parse(r.stdout) as { total: Array<{ peakRequestTokens: number }> }).total[0]!.peakRequestTokens;
  assert.ok(peak(calibrated) > peak(plain), `the calibration counts more tokens than chars/4: ${peak(calibrated)} vs ${peak(plain)}`);
  const table = await runCli(["bench", "replay", input, "--budget", "8000", "--strategy", "sections", "--calibration", "cal.json"], { cwd: dir });
  assert.match(table.stdout, new RegExp(`token counter: ${calibrationId(factors)} \\(cal\\.json\\)`));
});
