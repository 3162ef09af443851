/**
 * What says it can be resumed is resumed, through the built CLI with scripted tasks and real run
 * directories:
 * - a task that used all its steps (`--max-steps`, `limits.maxSteps`) continues from its
 *   checkpoint when its cap now allows more — the conversation kept, no shell call made twice,
 *   its steps counting on — also after a SIGKILL mid-continuation; the same cap or a smaller one
 *   (with or without `--retry-errored`) keeps it and says what continues it; `--max-steps` does
 *   not move a task that sets its own cap, and says so;
 * - `--retry-errored` runs a failed setup again in a fresh workspace;
 * - a task the suite no longer defines (file deleted, file renamed, id renamed) leaves the
 *   manifest and the reports with `removed: suite/id` (printed and in summary.md), its folder
 *   kept until `--restart`; a task left out by a narrower selection is not removed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli, startCli } from "../support/cli.js";
import { readJson } from "../support/run-dir.js";
import { OPEN_POLICY, shellStepsTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { exists, waitFor } from "../support/wait.js";

const lines = async (path: string) => (await readFile(path, "utf8")).split("\n").filter(Boolean);

/** Each step appends its tag to tags.txt (the side effect counted), then sleeps `sleep` s; the check wants every tag once. */
function taggedSteps(tag: string, steps: number, opts: { sleep?: number; limits?: string } = {}): string {
  const commands = Array.from({ length: steps }, (_, k) => `echo ${tag}-${k} >> tags.txt${opts.sleep ? ` && sleep ${opts.sleep}` : ""}`);
  return shellStepsTask(commands, {
    rest: `${opts.limits ? `limits: ${opts.limits}\n` : ""}checks:\n  - { name: every tag once, run: "test $(sort -u tags.txt | wc -l) -eq ${steps} && test $(wc -l < tags.txt) -eq ${steps}" }\n`,
  });
}

/** The model requests of a task's transcript, over every run of it. */
async function requests(out: string, key: string): Promise<number> {
  return (await lines(join(out, "tasks", key, "default", "1", "events.jsonl"))).filter((l) => l.includes('"type":"request"')).length;
}

test("a step-capped task is kept at the same or a smaller cap (said, --retry-errored too) and continues from its checkpoint at a larger one", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/capped.yaml": taggedSteps("c", 4) });
  const out = join(root, "run");
  const first = await runCli(["run", "suite", "--out", out, "--max-steps", "2"], { cwd: root });
  assert.equal(first.code, 1, first.stderr);
  const [capped] = await readRunResults(out);
  assert.deepEqual([capped!.status, capped!.error!.code, capped!.steps], ["errored", "step_cap", 2]);
  assert.equal(capped!.error!.message, "the task used all 2 of its steps without finishing; a larger --max-steps or limits.maxSteps continues it from its checkpoint");
  assert.match(first.stderr, /\[suite\/capped\] agent error step_cap: the task used all 2 of its steps/, "the live line says the task's cap");
  assert.deepEqual(await lines(join(out, "tasks/suite/capped/default/1/workspace/tags.txt")), ["c-0", "c-1"]);
  assert.match(first.stdout, /Raise the step cap \(--max-steps, or limits\.maxSteps for a task that sets its own\) and run the same command to continue the step-capped tasks/);

  for (const [cap, retry] of [["2", false], ["2", true], ["1", false]] as const) {
    const kept = await runCli(["run", "suite", "--out", out, "--max-steps", cap, ...(retry ? ["--retry-errored"] : [])], { cwd: root });
    assert.equal(kept.code, 1, kept.stderr);
    assert.match(kept.stderr, new RegExp(`rhema: suite/capped ${retry ? "not retried" : "stays errored"}: it used all 2 steps it had; ` +
      `its step cap is ${cap}: pass a larger --max-steps to continue it from its checkpoint`));
    assert.deepEqual(await readRunResults(out), [capped], `--max-steps ${cap}${retry ? " --retry-errored" : ""} keeps the result as it was`);
  }
  assert.equal(await requests(out, "suite/capped"), 2, "nothing was asked of the model while it was kept");

  const more = await runCli(["run", "suite", "--out", out, "--max-steps", "9"], { cwd: root });
  assert.equal(more.code, 0, more.stderr + more.stdout);
  assert.doesNotMatch(more.stdout, /Raise the step cap/);
  assert.match(more.stderr, /rhema: suite\/capped continues from its checkpoint: its step cap is now 9 \(2 steps taken\)/);
  assert.match(more.stderr, /\[suite\/capped\] step 3 shell: echo c-2/, "the step count goes on from the checkpoint's");
  assert.doesNotMatch(more.stderr, /step 1 shell/);
  const [finished] = await readRunResults(out);
  assert.deepEqual([finished!.status, finished!.steps, finished!.resumed], ["passed", 5, 1]);
  assert.equal(finished!.startedAt, capped!.startedAt, "the same task, continued");
  assert.deepEqual(await lines(join(out, "tasks/suite/capped/default/1/workspace/tags.txt")), ["c-0", "c-1", "c-2", "c-3"], "no call ran twice");
  assert.equal(await requests(out, "suite/capped"), 5, "five requests over both runs: none repeated");
  assert.equal(finished!.stats!.requests, 5, "stats carried over the checkpoint");
});

test("a task's own limits.maxSteps is not moved by --max-steps (said); raising it in the file continues the task", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/own.yaml": taggedSteps("o", 3, { limits: "{ maxSteps: 1 }" }) });
  const out = join(root, "run");
  assert.equal((await runCli(["run", "suite", "--out", out], { cwd: root })).code, 1);
  const [capped] = await readRunResults(out);
  assert.deepEqual([capped!.error!.code, capped!.steps], ["step_cap", 1]);
  const flag = await runCli(["run", "suite", "--out", out, "--max-steps", "50", "--retry-errored"], { cwd: root });
  assert.equal(flag.code, 1);
  assert.match(flag.stderr, /suite\/own not retried: it used all 1 step it had; its limits\.maxSteps is 1 \(--max-steps does not apply to a task that sets its own\): raise limits\.maxSteps to continue it/);
  assert.deepEqual(await readRunResults(out), [capped]);
  // limits are not part of the content hash: a raised cap is the same task, continued.
  await writeFile(join(root, "suite/own.yaml"), taggedSteps("o", 3, { limits: "{ maxSteps: 2 }" }));
  const raised = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(raised.code, 1, "capped again, one step further");
  const [again] = await readRunResults(out);
  assert.deepEqual([again!.error!.code, again!.steps, again!.resumed], ["step_cap", 2, 1]);
  await writeFile(join(root, "suite/own.yaml"), taggedSteps("o", 3, { limits: "{ maxSteps: 10 }" }));
  const done = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(done.code, 0, done.stderr);
  const [finished] = await readRunResults(out);
  assert.deepEqual([finished!.status, finished!.steps, finished!.resumed], ["passed", 4, 2]);
  assert.deepEqual(await lines(join(out, "tasks/suite/own/default/1/workspace/tags.txt")), ["o-0", "o-1", "o-2"]);
});

test("a step-capped task SIGKILLed mid-continuation continues again with no shell call made twice", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/killed.yaml": taggedSteps("k", 5, { sleep: 2 }) });
  const out = join(root, "run");
  const tags = join(out, "tasks/suite/killed/default/1/workspace/tags.txt");
  assert.equal((await runCli(["run", "suite", "--out", out, "--max-steps", "2"], { cwd: root })).code, 1);
  assert.deepEqual(await lines(tags), ["k-0", "k-1"]);
  // Continued with a larger cap, and killed inside step 4's call (its tag written, its sleep running).
  const continued = startCli(["run", "suite", "--out", out, "--max-steps", "20"], { cwd: root });
  await waitFor(async () => (await lines(tags).catch((): string[] => [])).includes("k-3"), 60_000);
  continued.child.kill("SIGKILL");
  await continued.done;
  assert.equal(await exists(join(out, "tasks/suite/killed/default/1/result.json")), false, "killed: no result");
  const resumed = await runCli(["run", "suite", "--out", out, "--max-steps", "20"], { cwd: root });
  assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
  assert.match(resumed.stderr, /\[suite\/killed\] step 5 shell: echo k-4/);
  const [finished] = await readRunResults(out);
  assert.deepEqual([finished!.status, finished!.steps, finished!.resumed], ["passed", 6, 2]);
  assert.deepEqual(await lines(tags), ["k-0", "k-1", "k-2", "k-3", "k-4"], "every call's side effect once");
});

test("--retry-errored runs a failed setup again in a fresh workspace; without it the failure is kept", async (t) => {
  const root = await tempDir(t);
  // Setup 1 leaves a file behind; setup 2 writes half a file, counts its runs outside the workspace, and fails until `ok` exists.
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/setup.yaml": `prompt: Say done.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - say: done
workspace:
  setup:
    - "echo one >> one.txt"
    - "echo half >> half.txt; echo run >> ${root}/setup-runs.txt; test -f ${root}/ok || { echo 'npm ERR! network blip' >&2; exit 1; }"
checks:
  - { name: fresh workspace, run: "test $(wc -l < one.txt) -eq 1 && test $(wc -l < half.txt) -eq 1" }
` });
  const out = join(root, "run");
  // Unsandboxed: setup 2 writes outside the workspace.
  const args = ["run", "suite", "--out", out, "--sandbox", "off"];
  assert.equal((await runCli(args, { cwd: root })).code, 1);
  const [failed] = await readRunResults(out);
  assert.deepEqual([failed!.status, failed!.error!.code], ["errored", "setup_failed"]);
  assert.equal((await runCli(args, { cwd: root })).code, 1);
  assert.deepEqual(await readRunResults(out), [failed], "kept without --retry-errored");
  assert.deepEqual(await lines(join(root, "setup-runs.txt")), ["run"]);
  await writeFile(join(root, "ok"), "");
  const retried = await runCli([...args, "--retry-errored"], { cwd: root });
  assert.equal(retried.code, 0, retried.stderr + retried.stdout);
  assert.match(retried.stderr, /rhema: suite\/setup retried: its setup failed, so its workspace is made afresh and every setup command runs again/);
  assert.match(retried.stderr, /\[suite\/setup\] setup 1\/2: echo one/, "every setup command runs again");
  const [passed] = await readRunResults(out);
  assert.deepEqual([passed!.status, passed!.checks.map((c) => c.passed)], ["passed", [true]]);
  assert.deepEqual(await lines(join(root, "setup-runs.txt")), ["run", "run"]);
});

test("a task the suite no longer defines leaves the manifest and the reports (removed: suite/id); its folder stays until --restart", async (t) => {
  const root = await tempDir(t);
  const task = (id?: string) => `${id ? `id: ${id}\n` : ""}prompt: Say done.\npolicy: ../policy.yaml\nmodel:\n  provider: scripted\n  script:\n    - say: done\n`;
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/a.yaml": task(), "suite/b.yaml": task(), "suite/c.yaml": task(), "suite/d.yaml": task("d") });
  const out = join(root, "run");
  assert.equal((await runCli(["run", "suite", "--out", out], { cwd: root })).code, 0);
  // A narrower selection leaves the others in the run: not removed.
  const narrow = await runCli(["run", "suite/a.yaml", "--out", out], { cwd: root });
  assert.equal(narrow.code, 0, narrow.stderr);
  const filtered = await runCli(["run", "suite", "--out", out, "--filter", "suite/a"], { cwd: root });
  assert.equal(filtered.code, 0, filtered.stderr);
  assert.doesNotMatch(narrow.stderr + filtered.stderr, /removed/);
  assert.deepEqual((await readRunResults(out)).map((r) => r.id), ["a", "b", "c", "d"]);

  await rm(join(root, "suite/b.yaml")); // deleted
  await rename(join(root, "suite/c.yaml"), join(root, "suite/c2.yaml")); // renamed: a new id
  await writeFile(join(root, "suite/d.yaml"), task("d2")); // its id renamed in the file
  const refused = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(refused.code, 2, "the renamed tasks are new ones: they need --add, as any new task");
  assert.match(refused.stderr, /holds a run without these selected tasks:\n {2}suite\/c2 .*\n {2}suite\/d2 .*\nand the suite no longer defines these \(they leave the run once it goes on\):\n {2}suite\/b .*\n {2}suite\/c .*\n {2}suite\/d /);
  const added = await runCli(["run", "suite", "--out", out, "--add"], { cwd: root });
  assert.equal(added.code, 0, added.stderr);
  for (const id of ["b", "c", "d"]) {
    assert.match(added.stderr, new RegExp(`rhema: removed: suite/${id} \\(its task file .*${id}\\.yaml no longer defines it; it leaves the run's reports, its folder stays until --restart\\)`));
  }
  const manifest = await readJson<{ tasks: { id: string }[] }>(join(out, "manifest.json"));
  assert.deepEqual(manifest.tasks.map((m) => m.id), ["a", "c2", "d2"]);
  assert.deepEqual((await readRunResults(out)).map((r) => r.id), ["a", "c2", "d2"]);
  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.match(summary, /_Removed from the run \(the suite no longer defines them; their folders stay until `--restart`\): `suite\/b`, `suite\/c`, `suite\/d`\._/);
  assert.doesNotMatch(summary, /\| `suite\/b` \|/);
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  assert.doesNotMatch(junit, /name="suite\/b"|classname="suite" name="b"/);
  assert.equal((junit.match(/<testcase /g) ?? []).length, 3);
  assert.deepEqual((await readdir(join(out, "tasks/suite"))).sort(), ["a", "b", "c", "c2", "d", "d2"], "the removed tasks' folders stay");

  const next = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(next.code, 0, next.stderr);
  assert.doesNotMatch(next.stderr, /removed/, "said once");
  const restarted = await runCli(["run", "suite", "--out", out, "--restart"], { cwd: root });
  assert.equal(restarted.code, 0, restarted.stderr);
  assert.deepEqual((await readdir(join(out, "tasks/suite"))).sort(), ["a", "c2", "d2"], "--restart clears them");
});
