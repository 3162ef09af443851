/**
 * Trials through the built CLI (issue 21): each repeat of a task is a trial of its own — its own
 * folder `tasks/<suite>/<id>/default/<n>/`, workspace, checkpoint and result — resumed one by one
 * after a kill; a run directory made before trials is read but not resumed; a task asks for fewer
 * trials than its run planned only with `--restart`; `--stop-early` skips the trials whose gate is
 * decided, now and on resume; the trial flags are checked before anything runs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli, startCli } from "../support/cli.js";
import { readJson } from "../support/run-dir.js";
import { OPEN_POLICY, shellStepsTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { exists, waitFor } from "../support/wait.js";

const lines = async (path: string) => (await readFile(path, "utf8")).split("\n").filter(Boolean);

/** The JSON progress lines of a run's stdout. */
const progress = (stdout: string) => stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);

/** A scripted task of `repeats` trials whose alternatives say `good` or `bad` by repeat (`pick: repeat`); its check wants `good`. */
function verdictTask(repeats: number, says: readonly ("good" | "bad")[], rest = ""): string {
  const scripts = says.map((word) => `    - script: [{ say: "${word}" }]\n`).join("");
  return `prompt: Say whether it is good.
repeats: ${repeats}
model:
  provider: scripted
  pick: repeat
  scripts:
${scripts}checks:
  - { name: good, run: 'grep -qx good "$RHEMA_FINAL_ANSWER"' }
${rest}`;
}

/** The repeats that have a folder under the task's `default/`. */
async function trialFolders(out: string, suite: string, id: string): Promise<number[]> {
  const names = await readdir(join(out, "tasks", suite, id, "default")).catch(() => []);
  return names.map(Number).sort((a, b) => a - b);
}

test("each repeat is a trial with its own folder and workspace; a SIGKILL mid-suite resumes each unfinished trial once and keeps each finished one", async (t) => {
  const root = await tempDir(t);
  const steps = 3;
  // Each step appends its tag to the trial's own tags.txt, then sleeps: the check wants every tag exactly once.
  const commands = Array.from({ length: steps }, (_, k) => `echo t-${k} >> tags.txt && sleep 0.3`);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/tagging.yaml": shellStepsTask(commands, {
      rest: `repeats: 4\nchecks:\n  - { name: every tag once, run: "test $(sort -u tags.txt | wc -l) -eq ${steps} && test $(wc -l < tags.txt) -eq ${steps}" }\n`,
    }),
  });
  const out = join(root, "run");
  const first = startCli(["run", "suite", "--out", out, "--concurrency", "2", "--sandbox", "off"], { cwd: root });
  // Killed once a trial has finished and others are under way.
  await waitFor(async () => (await readRunResults(out).catch(() => [])).length >= 1);
  first.child.kill("SIGKILL");
  await first.done;
  const before = await readRunResults(out);
  assert.ok(before.length >= 1 && before.length < 4, `killed mid-suite: ${before.length} of 4 trials finished`);

  const second = await runCli(["run", "suite", "--out", out, "--concurrency", "2", "--sandbox", "off", "--json"], { cwd: root });
  assert.equal(second.code, 0, second.stderr);
  const results = await readRunResults(out);
  assert.deepEqual(results.map((r) => [r.trial?.repeat, r.status]), [[1, "passed"], [2, "passed"], [3, "passed"], [4, "passed"]]);
  for (const repeat of [1, 2, 3, 4]) {
    assert.deepEqual(await lines(join(out, "tasks", "suite", "tagging", "default", String(repeat), "workspace", "tags.txt")),
      ["t-0", "t-1", "t-2"], `trial ${repeat}: each step ran once, in its own workspace`);
  }
  const ends = progress(second.stdout).filter((p) => p.type === "task_end");
  assert.deepEqual(ends.filter((p) => p.kept === true).map((p) => p.trial).sort(), before.map((r) => `suite/tagging#${r.trial!.repeat}`).sort(),
    "the trials finished before the kill are kept, not run again");
  assert.equal(ends.length, 4);
});

test("a run directory made before trials (layout 1) is refused with what to do, and --restart starts it over", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "suite/one.yaml": verdictTask(1, ["good"]) });
  const out = join(root, "run");
  const made = await runCli(["run", "suite", "--out", out, "--sandbox", "off"], { cwd: root });
  assert.equal(made.code, 0, made.stderr);
  // The manifest as rhema wrote it before trials: no layout, no trials.
  const manifest = await readJson<Record<string, unknown> & { tasks: Record<string, unknown>[] }>(join(out, "manifest.json"));
  const { layout: _layout, variants: _variants, ...older } = manifest;
  await writeFile(join(out, "manifest.json"), JSON.stringify({ ...older, tasks: older.tasks.map(({ trials: _n, gate: _g, ...task }) => task) }));
  const refused = await runCli(["run", "suite", "--out", out, "--sandbox", "off"], { cwd: root });
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, new RegExp(`${out} holds a run made before trials \\(run-directory layout 1\\), which this rhema reads \\(report merge, bench replay\\) but does not resume: start it over with --restart, or pass another --out`));
  const restarted = await runCli(["run", "suite", "--out", out, "--sandbox", "off", "--restart"], { cwd: root });
  assert.equal(restarted.code, 0, restarted.stderr);
  assert.equal((await readJson(join(out, "manifest.json"))).layout, 2);
});

test("more repeats on resume add trials and keep the finished ones; fewer are refused (exit 2) unless --restart", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "suite/v.yaml": verdictTask(1, ["good"]).replace("repeats: 1\n", "") });
  const out = join(root, "run");
  const run = (...extra: string[]) => runCli(["run", "suite", "--out", out, "--sandbox", "off", "--json", ...extra], { cwd: root });
  assert.equal((await run("--repeats", "2")).code, 0);
  assert.deepEqual(await trialFolders(out, "suite", "v"), [1, 2]);
  const more = await run("--repeats", "3");
  assert.equal(more.code, 0, more.stderr);
  assert.deepEqual(progress(more.stdout).filter((p) => p.type === "task_start").map((p) => p.trial), ["suite/v#3"], "only the new trial runs");
  assert.deepEqual((await readJson<{ tasks: { trials: number }[] }>(join(out, "manifest.json"))).tasks.map((task) => task.trials), [3]);

  const fewer = await run("--repeats", "2");
  assert.equal(fewer.code, 2, fewer.stderr);
  assert.match(fewer.stderr, /planned more trials of these tasks than this run asks for:\n {2}suite\/v: 3 planned, 2 asked/);
  assert.deepEqual(await trialFolders(out, "suite", "v"), [1, 2, 3], "nothing was removed");
  const restarted = await run("--repeats", "2", "--restart");
  assert.equal(restarted.code, 0, restarted.stderr);
  assert.deepEqual(await trialFolders(out, "suite", "v"), [1, 2]);
});

test("--stop-early skips the trials once the gate is decided, and a resume does not run them", async (t) => {
  const root = await tempDir(t);
  // Every trial must pass (the default gate): the first failure decides it.
  // A rate of 0.4 over 5: good, bad, good is 2 of 3, and even 2 of 5 reaches 0.4, so 4 and 5 are skipped.
  await writeFiles(root, {
    "suite/every.yaml": verdictTask(5, ["bad", "good"]),
    "suite/rate.yaml": verdictTask(5, ["good", "bad"], "pass: { rate: 0.4 }\n"),
  });
  const out = join(root, "run");
  const run = () => runCli(["run", "suite", "--out", out, "--sandbox", "off", "--json", "--concurrency", "1", "--stop-early"], { cwd: root });
  const first = await run();
  const lines1 = progress(first.stdout);
  assert.deepEqual(lines1.filter((p) => p.type === "task_start").map((p) => p.trial), ["suite/every#1", "suite/rate#1", "suite/rate#2", "suite/rate#3"]);
  assert.deepEqual(lines1.filter((p) => p.type === "trial_skipped").map((p) => p.trial),
    ["suite/every#2", "suite/every#3", "suite/every#4", "suite/every#5", "suite/rate#4", "suite/rate#5"]);
  assert.deepEqual(await trialFolders(out, "suite", "every"), [1], "a skipped trial has no folder");
  assert.deepEqual(await trialFolders(out, "suite", "rate"), [1, 2, 3]);
  assert.equal(first.code, 1, "the every-trial task failed its gate");

  // Resumed with more at once: the kept trials the queue has not reached yet still decide the gate.
  const again = await runCli(["run", "suite", "--out", out, "--sandbox", "off", "--json", "--concurrency", "4", "--stop-early"], { cwd: root });
  assert.deepEqual(progress(again.stdout).filter((p) => p.type === "task_start"), [], "nothing runs on resume");
  assert.equal(progress(again.stdout).filter((p) => p.type === "trial_skipped").length, 6);
  assert.equal(await exists(join(out, "tasks", "suite", "every", "default", "2")), false);
});

test("--stop-early on resume counts a later trial's kept result before it judges an earlier unstarted one", async (t) => {
  const root = await tempDir(t);
  // Every trial fails; the first run keeps all three. Trials 1 and 2 are then lost (as if killed
  // before they began), so the resume's queue reaches them before the kept trial 3: its failure
  // alone decides the every-trial gate, and neither may run.
  await writeFiles(root, { "suite/every.yaml": verdictTask(3, ["bad"]) });
  const out = join(root, "run");
  const first = await runCli(["run", "suite", "--out", out, "--sandbox", "off", "--json"], { cwd: root });
  assert.equal(first.code, 1, first.stderr);
  for (const n of ["1", "2"]) await rm(join(out, "tasks", "suite", "every", "default", n), { recursive: true });
  const again = await runCli(["run", "suite", "--out", out, "--sandbox", "off", "--json", "--concurrency", "1", "--stop-early"], { cwd: root });
  assert.equal(again.code, 1, again.stderr);
  assert.deepEqual(progress(again.stdout).filter((p) => p.type === "task_start").map((p) => p.trial), [], "the kept failure decided the gate");
  assert.deepEqual(progress(again.stdout).filter((p) => p.type === "trial_skipped").map((p) => p.trial), ["suite/every#1", "suite/every#2"]);
});

test("the trial flags are checked before anything runs: exit 2 naming the flag", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "suite/v.yaml": verdictTask(1, ["good"]) });
  const cases: [string[], RegExp][] = [
    [["--repeats", "0"], /Expected --repeats to be a whole number from 1 and up, got "0"/],
    [["--repeats", "1001"], /Expected --repeats to be at most 1000, got 1001/],
    [["--repeats", "2.5"], /Expected --repeats to be a whole number/],
    [["--min-pass-rate", "0"], /Expected --min-pass-rate to be a number above 0 and at most 1 \(such as 0\.8\), got "0"/],
    [["--min-pass-rate", "1.5"], /Expected --min-pass-rate .* got "1\.5"/],
    [["--min-pass-rate", "80%"], /Expected --min-pass-rate .* got "80%"/],
    [["--pass-at", "1,x"], /Expected --pass-at as k's such as 1,3: expected whole numbers from 1 separated by commas, got "x"/],
    [["--pass-at", "0"], /Expected --pass-at/],
    [["--gate", "upper"], /gate/],
    [["--junit-cases", "step"], /junit-cases/],
  ];
  for (const [flags, message] of cases) {
    const out = join(root, `run-${flags.join("_").replace(/[^A-Za-z0-9_-]/g, "")}`);
    const result = await runCli(["run", "suite", "--out", out, "--sandbox", "off", ...flags], { cwd: root });
    assert.equal(result.code, 2, `${flags.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message, flags.join(" "));
    assert.equal(await exists(out), false, `${flags.join(" ")}: nothing written`);
  }
});
