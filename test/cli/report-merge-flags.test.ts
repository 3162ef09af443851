/**
 * `rhema report merge --pass-at --junit-cases` (issue 21), through `main` with captured streams:
 * a bad k or granularity is a usage error (exit 2) naming the flag, before anything is written;
 * good ones shape the merged reports.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Writable } from "node:stream";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/io.js";
import { writeReports } from "../../src/runner/reports/run-reports.js";
import { RunDir } from "../../src/runner/run-dir/run-dir.js";
import { tempDir } from "../support/temp-dir.js";
import { sampleMeta, sampleResult } from "../runner/sample-results.js";

async function rhema(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const sink = (append: (text: string) => void) => new Writable({ write(chunk: Buffer, _e, done) { append(chunk.toString()); done(); } });
  const io: CliIo = { cwd, env: {}, stdout: sink((t) => (stdout += t)), stderr: sink((t) => (stderr += t)), pid: process.pid, interrupt: new AbortController().signal };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

async function runDir(dir: string): Promise<void> {
  const result = sampleResult("s", "one", "passed", 1);
  await new RunDir(dir).task(result).writeResult(result);
  await mkdir(dirname(join(dir, result.transcriptPath)), { recursive: true });
  await writeFile(join(dir, result.transcriptPath), "{}\n");
  await writeReports(dir, [result], sampleMeta());
}

test("report merge: a bad --pass-at or --junit-cases is exit 2 naming the flag, and nothing is written", async (t) => {
  const dir = await tempDir(t);
  await runDir(join(dir, "a"));
  const bad = await rhema(["report", "merge", "a", "--out", "m", "--pass-at", "1,0"], dir);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /^rhema: --pass-at: expected whole numbers from 1 separated by commas, got "0" in "1,0"/);
  const cases = await rhema(["report", "merge", "a", "--out", "m", "--junit-cases", "step"], dir);
  assert.equal(cases.code, 2, cases.stderr);
  assert.match(cases.stderr, /junit-cases/);
  assert.equal(existsSync(join(dir, "m")), false, "nothing written");
});

test("report merge --pass-at 1,3 --junit-cases trial shapes the merged stats.json", async (t) => {
  const dir = await tempDir(t);
  await runDir(join(dir, "a"));
  const ok = await rhema(["report", "merge", "a", "--out", "m", "--pass-at", "1,3", "--junit-cases", "trial"], dir);
  assert.equal(ok.code, 0, ok.stderr);
  const stats = JSON.parse(await readFile(join(dir, "m", "stats.json"), "utf8")) as { taskTrials: { passAt: { k: number; value: number | null }[] }[] };
  assert.deepEqual(stats.taskTrials[0]!.passAt, [{ k: 1, value: 1 }, { k: 3, value: null, why: "n<k" }]);
});
