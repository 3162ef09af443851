/**
 * Chaos: the CLI runs a suite whose every tool call is a real shell side effect (appending its
 * own tag to a file), and is SIGKILLed at random moments at least 30 times, resumed after each,
 * until the suite finishes. Nothing may run twice, nothing completed may be lost, and nothing
 * on disk may ever fail to parse. The kill times come from a seeded PRNG: the seed is
 * `CHAOS_SEED` when set (else a fresh one) and is printed, so a failing run can be replayed.
 */
import type { ChildProcess } from "node:child_process";
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { CheckpointStore } from "../../src/store/checkpoint-store.js";
import { INTERRUPTED_RESULT } from "../../src/core/conversation.js";
import { toolCallsOf, type ToolResultBlock } from "../../src/core/messages.js";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { startCli } from "../support/cli.js";
import { OPEN_POLICY, taggingTask, writeFiles } from "../support/suite-files.js";
import { seedFrom, seededRandom } from "../support/seeded-random.js";
import { tempDir } from "../support/temp-dir.js";

const TASKS = ["t1", "t2", "t3"];
const STEPS = 36;
const KILLS = 30;
/** A kill lands this long at most after a task has started: 30 kills stay well short of the suite's work. */
const KILL_WINDOW_MS = 600;
const SEED = seedFrom(process.env.CHAOS_SEED, "CHAOS_SEED");
console.log(`chaos seed ${SEED} (replay with CHAOS_SEED=${SEED})`);

/** Every JSON file parses; every JSON-lines file parses up to a torn last line; JUnit is whole. */
async function assertEverythingParses(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return []; // killed before it made the run directory
    throw err;
  });
  for (const entry of entries) {
    if (!entry.isFile() || entry.parentPath.includes("/workspace")) continue;
    const path = join(entry.parentPath, entry.name);
    const text = await readFile(path, "utf8");
    if (entry.name.endsWith(".json") || entry.name === "rhema.lock") {
      if (entry.name === "rhema.lock" && text === "") continue; // created, not yet written: taken over as stale
      assert.doesNotThrow(() => JSON.parse(text), `${path} parses`);
    } else if (entry.name.endsWith(".jsonl")) {
      for (const line of text.split("\n").slice(0, -1)) assert.doesNotThrow(() => JSON.parse(line), `${path} line parses`);
    } else if (entry.name === "junit.xml") {
      assert.match(text, /^<\?xml[\s\S]*<\/testsuites>\s*$/, `${path} is whole`);
    }
  }
}

/**
 * SIGKILLs the CLI `delayMs` after it reports a task started — timed from there, not from the
 * spawn, since starting node takes longer than a whole window on a busy machine and a kill
 * before any task runs tests nothing. Returns a cancel for a run that ends first.
 */
function killOnceATaskRuns(child: ChildProcess, delayMs: number): () => void {
  let seen = "";
  let timer: NodeJS.Timeout | undefined;
  const onData = (chunk: Buffer): void => {
    seen += chunk.toString();
    if (timer !== undefined || !/\] started$/m.test(seen)) return;
    timer = setTimeout(() => child.kill("SIGKILL"), delayMs);
  };
  child.stderr!.on("data", onData);
  return () => {
    clearTimeout(timer);
    child.stderr!.off("data", onData);
  };
}

test(`survives ${KILLS} SIGKILLs at random moments: no call twice, none lost, every file parses`, async (t) => {
  const root = await tempDir(t);
  const files: Record<string, string> = { "policy.yaml": OPEN_POLICY };
  for (const id of TASKS) files[`chaos/${id}.yaml`] = taggingTask(id, STEPS, { sleep: 0.3, chunkDelayMs: 15 });
  await writeFiles(root, files);
  const out = join(root, "run");
  const args = ["run", "chaos", "--out", out, "--concurrency", "3"];

  const random = seededRandom(SEED);
  const killDelaysMs: number[] = [];
  let kills = 0;
  let finished: number | null = null;
  let lastStderr = "";
  for (let attempt = 0; finished === null; attempt++) {
    const run = startCli(args, { cwd: root });
    let cancelKill = () => {};
    if (kills < KILLS) {
      const delayMs = random.int(0, KILL_WINDOW_MS);
      killDelaysMs.push(delayMs);
      cancelKill = killOnceATaskRuns(run.child, delayMs);
    }
    const result = await run.done;
    cancelKill();
    if (result.signal === "SIGKILL") kills += 1;
    else finished = result.code;
    lastStderr = result.stderr;
    await assertEverythingParses(out);
    assert.ok(attempt < KILLS + 5, "the suite finishes");
  }
  assert.equal(kills, KILLS, `the suite outlasted ${KILLS} kills (it finished after ${kills})`);
  const results = await readRunResults(out);
  assert.deepEqual(results.map((r) => [r.id, r.status, r.error?.message ?? r.checks.find((c) => !c.passed)?.outputTail ?? ""]), TASKS.map((id) => [id, "passed", ""]));
  assert.equal(finished, 0, lastStderr);

  assert.deepEqual(results.map((r) => r.id), TASKS, "the reports account for every task");
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  for (const id of TASKS) assert.match(junit, new RegExp(`<testcase [^>]*name="${id}"`));

  let interruptedCalls = 0;
  for (const id of TASKS) {
    const taskDir = join(out, "tasks/chaos", id);
    const tags = (await readFile(join(taskDir, "workspace/tags.txt"), "utf8")).trim().split("\n");
    assert.equal(new Set(tags).size, tags.length, `${id}: no tag twice: ${tags.join(" ")}`);
    const session = (await new CheckpointStore(taskDir).load())!;
    const results = new Map(session.messages.flatMap((m) => m.content).filter((b): b is ToolResultBlock => b.type === "tool_result").map((r) => [r.callId, r]));
    const expected: string[] = [];
    for (const call of session.messages.flatMap(toolCallsOf)) {
      const tag = /echo (\S+) >>/.exec((call.input as { command: string }).command)![1]!;
      const result = results.get(call.id);
      assert.ok(result, `${id}: call ${call.id} is answered`);
      if (String(result.content).startsWith(INTERRUPTED_RESULT)) {
        interruptedCalls += 1;
        assert.ok(tags.filter((x) => x === tag).length <= 1, `${id}: interrupted ${tag} was not re-run`);
        if (tags.includes(tag)) expected.push(tag);
      } else {
        assert.equal(tags.filter((x) => x === tag).length, 1, `${id}: completed ${tag} is on disk once`);
        expected.push(tag);
      }
    }
    assert.deepEqual(tags, expected, `${id}: the tags are exactly the calls' effects, in order`);
    if (![...results.values()].some((r) => String(r.content).startsWith(INTERRUPTED_RESULT))) {
      assert.deepEqual(tags, Array.from({ length: STEPS }, (_, k) => `${id}-${k}`), `${id}: with no call cut, as an uninterrupted run`);
    }
  }
  const remaining = (await readRunResults(out)).reduce((n, r) => n + r.resumed, 0);
  // Each run after the first resumes a task the kill before it interrupted (the first kill may
  // land before any task wrote its state): kills that hit no running task would leave this at 0.
  assert.ok(remaining >= KILLS - 1, `the kills landed while tasks ran: ${remaining} task resumes after ${kills} kills`);
  t.diagnostic(`chaos seed ${SEED}; kill delays (ms): ${killDelaysMs.join(" ")}`);
  t.diagnostic(`${kills} kills, ${interruptedCalls} call(s) cut mid-tool and closed as interrupted, ${remaining} task resumes`);
});
