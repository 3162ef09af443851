/**
 * Running one task in its run-directory folder: a scripted task on a real workspace, real
 * shell, real checks. Finished, kept, interrupted and resumed, errored; denials read off the session.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { lstat, mkdir, readFile, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { allowAll, type Approval, type Decision } from "../../../src/core/approval.js";
import { OutputError } from "../../../src/core/errors.js";
import type { TaskEvent as AgentEvent } from "../../../src/runner/run-dir/runner-events.js";
import { loadPolicy } from "../../../src/policy/file/load-policy.js";
import { PolicyApproval } from "../../../src/policy/decide/policy-approval.js";
import { ScriptedProvider } from "../../../src/providers/scripted.js";
import { processCommandRunner } from "../../../src/runner/execute/command-runner.js";
import { trialsOf, type Trial } from "../../../src/runner/trials/trial.js";
import { SecretRedactor } from "../../../src/runner/run-dir/secret-redactor.js";
import { runTask, type TaskRunEnv } from "../../../src/runner/execute/task-executor.js";
import { loadTaskFile, type TaskDefinition } from "../../../src/runner/tasks/task-file.js";
import { RunDir } from "../../../src/runner/run-dir/run-dir.js";
import type { TaskResult } from "../../../src/runner/run-dir/task-result.js";
import { writeFiles } from "../../support/suite-files.js";
import { tempDir } from "../../support/temp-dir.js";
import { exists } from "../../support/wait.js";

const AT = "2026-03-04T05:06:07.000Z";
const SHELL_ENV: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" };

/** A task's one trial. */
const onlyTrial = (task: TaskDefinition): Trial => trialsOf(task, 1)[0]!;

// ── runTask ───────────────────────────────────────────────────────────────────────────────

/** A suite folder with one scripted task; the task's model script comes from its YAML. */
async function scriptedTask(t: { after(fn: () => unknown): void }, body: string, files: Record<string, string> = {}) {
  const root = await tempDir(t);
  await writeFiles(root, { "suite/task.yaml": `prompt: Tag the file.\n${body}`, ...files });
  const task = await loadTaskFile(join(root, "suite", "task.yaml"));
  const runDir = join(root, "run");
  return { root, task, runDir, folder: new RunDir(runDir).trial(onlyTrial(task).key) };
}

function runEnv(runDir: string, opts: { signal?: AbortSignal; approval?: Approval; onEvent?: (e: AgentEvent) => void; secrets?: Record<string, string> } = {}): TaskRunEnv {
  return {
    runDir,
    signal: opts.signal ?? new AbortController().signal,
    now: () => new Date(AT),
    redactor: new SecretRedactor(opts.secrets ?? {}),
    runCommand: processCommandRunner({ baseEnv: SHELL_ENV }),
    providerFor: ({ task }: Trial) => new ScriptedProvider(task.model?.provider === "scripted" ? task.model.script : [], { record: false }),
    approvalFor: () => opts.approval ?? allowAll,
    defaults: {},
    commandsFor: () => ({ env: SHELL_ENV, allowEnv: [] }),
    hostEnv: SHELL_ENV,
    onEvent: (_task, event) => opts.onEvent?.(event),
  };
}

/** The parts of a result that vary from run to run, set to fixed values. */
const steady = (r: TaskResult): TaskResult => ({ ...r, durationMs: 0, stats: null, checks: r.checks.map((c) => ({ ...c, durationMs: 0 })) });

const TAGGING = `model:
  provider: scripted
  script:
    - say: tagging
      call: shell
      input: { command: "echo one >> tags.txt" }
    - say: done, one tag written
checks:
  - { name: tagged, run: "grep -qx one tags.txt && echo found" }
tags: [smoke]
`;

test("runs a task to a passing result, written to result.json", async (t) => {
  const { task, runDir, folder } = await scriptedTask(t, TAGGING);
  const outcome = await runTask(onlyTrial(task), runEnv(runDir));
  assert.equal(outcome.kind, "finished");
  if (outcome.kind !== "finished") return;
  assert.equal(outcome.kept, false);
  assert.deepEqual(steady(outcome.result), {
    version: 1, suite: "suite", id: "task", file: task.file, contentHash: task.contentHash, tags: ["smoke"],
    provider: "scripted:script", status: "passed", startedAt: AT, finishedAt: AT, durationMs: 0, steps: 2, stats: null,
    checks: [{ name: "tagged", command: "grep -qx one tags.txt && echo found", exitCode: 0, passed: true, durationMs: 0, outputTail: "found\n", timedOut: false, line: 10 }],
    finalAnswer: "done, one tag written", transcriptPath: "tasks/suite/task/default/1/events.jsonl",
    policyDenials: { count: 0, examples: [] }, resumed: 0, sandbox: { mode: "off", network: "allow" }, trial: { repeat: 1, variant: null },
    changes: { path: "tasks/suite/task/default/1/changes.patch", files: 1, insertions: 1, deletions: 0, binary: 0, bytes: 125, truncated: false, leftOut: 0 },
    // The empty workspace's folder and the file the agent wrote, by their blocks.
    workspace: { mechanism: "copy", diskBytes: ((await lstat(folder.workspace)).blocks + (await lstat(join(folder.workspace, "tags.txt"))).blocks) * 512 },
  });
  assert.match(await readFile(folder.path("changes"), "utf8"), /^diff --git a\/tags\.txt b\/tags\.txt\nnew file mode 100644\n[^]*\n\+one\n$/);
  assert.ok(outcome.result.stats && outcome.result.stats.requests === 2, "the transcript stats count the requests");
  assert.deepEqual(await folder.readResult(), outcome.result);
  assert.equal(await readFile(join(folder.workspace, "tags.txt"), "utf8"), "one\n");
});

test("a task already finished is kept as it is, nothing run again", async (t) => {
  const { task, runDir, folder } = await scriptedTask(t, TAGGING);
  const first = await runTask(onlyTrial(task), runEnv(runDir));
  const events: AgentEvent[] = [];
  const second = await runTask(onlyTrial(task), runEnv(runDir, { onEvent: (e) => events.push(e) }));
  assert.deepEqual(second, { kind: "finished", result: first.kind === "finished" ? first.result : null, kept: true });
  assert.deepEqual(events, []);
  assert.equal(await readFile(join(folder.workspace, "tags.txt"), "utf8"), "one\n");
});

test("an interrupt mid-turn leaves no result, and the next run resumes and finishes the task", async (t) => {
  const { task, runDir, folder } = await scriptedTask(t, `model:
  provider: scripted
  script:
    - call: shell
      input: { command: "echo one >> tags.txt" }
    - call: shell
      input: { command: "echo two >> tags.txt; sleep 30" }
    - say: finished after the resume
checks:
  - { name: both tags, run: "cat tags.txt" }
`);
  const controller = new AbortController();
  // Interrupted while the command sleeps, once its `echo two` has landed (a fixed delay raced the
  // shell's start on a loaded machine: an interrupt before the echo ran left "one" alone).
  const abortOnceWritten = async () => {
    while (!(await readFile(join(folder.workspace, "tags.txt"), "utf8").catch(() => "")).includes("two")) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
  };
  const onEvent = (e: AgentEvent) => {
    if (e.type === "tool_call" && JSON.stringify(e.input).includes("sleep 30")) void abortOnceWritten();
  };
  const started = Date.now();
  const cut = await runTask(onlyTrial(task), runEnv(runDir, { signal: controller.signal, onEvent }));
  assert.equal(cut.kind, "interrupted");
  assert.ok(cut.kind === "interrupted" && cut.spent.steps > 0 && cut.spent.stats!.requests === cut.spent.steps, "what it spent so far comes back");
  assert.ok(Date.now() - started < 5_000, "the running command was stopped");
  assert.equal(await exists(folder.path("result")), false);
  assert.equal((await folder.readState())?.setupDone, true);

  const resumed = await runTask(onlyTrial(task), runEnv(runDir));
  assert.equal(resumed.kind, "finished");
  if (resumed.kind !== "finished") return;
  assert.deepEqual(
    { status: resumed.result.status, resumed: resumed.result.resumed, steps: resumed.result.steps, finalAnswer: resumed.result.finalAnswer, output: resumed.result.checks.map((c) => c.outputTail) },
    { status: "passed", resumed: 1, steps: 3, finalAnswer: "finished after the resume", output: ["one\ntwo\n"] },
  );
  assert.deepEqual(await folder.readResult(), resumed.result);
});

test("a trial over a copied fixture interrupted after its snapshot resumes to a patch whose old side is read from the fixture, which the snapshot did not store", async (t) => {
  const { root, task, runDir, folder } = await scriptedTask(t, `workspace: { from: ../fixture }
model:
  provider: scripted
  script:
    - call: shell
      input: { command: "echo one >> tags.txt; sleep 30" }
    - say: finished after the resume
`, { "fixture/tags.txt": "zero\n", "fixture/other.txt": "never changed\n" });
  // As old as a fixture's files: none is read again for being written in the second git stages it.
  for (const name of ["tags.txt", "other.txt"]) await utimes(join(root, "fixture", name), 1577836800, 1577836800);
  const controller = new AbortController();
  const abortOnceWritten = async () => {
    while (!(await readFile(join(folder.workspace, "tags.txt"), "utf8").catch(() => "")).includes("one")) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
  };
  const onEvent = (e: AgentEvent) => {
    if (e.type === "tool_call") void abortOnceWritten();
  };
  const cut = await runTask(onlyTrial(task), runEnv(runDir, { signal: controller.signal, onEvent }));
  assert.equal(cut.kind, "interrupted");
  const snapshot = (await folder.readState())?.changesBase;
  assert.ok(snapshot && "tree" in snapshot, JSON.stringify(snapshot));
  assert.equal(snapshot.baseFiles, join(root, "fixture"), "the snapshot names where its unstored files are read");

  const resumed = await runTask(onlyTrial(task), runEnv(runDir));
  assert.equal(resumed.kind, "finished");
  assert.equal(await readFile(folder.path("changes"), "utf8"), "diff --git a/tags.txt b/tags.txt\nindex 26af6a8..2edebd4 100644\n--- a/tags.txt\n+++ b/tags.txt\n@@ -1 +1,2 @@\n zero\n+one\n");
});

test("a provider failure is an errored result with code provider, and no checks run", async (t) => {
  const { task, runDir, folder } = await scriptedTask(t, `model:
  provider: scripted
  script:
    - fail: { message: boom }
checks:
  - { name: never, run: "touch checked.txt" }
`);
  const outcome = await runTask(onlyTrial(task), runEnv(runDir));
  assert.equal(outcome.kind, "finished");
  if (outcome.kind !== "finished") return;
  const { status, error, checks, steps, finalAnswer } = outcome.result;
  assert.deepEqual({ status, error, checks, steps, finalAnswer }, { status: "errored", error: { code: "provider", message: "boom" }, checks: [], steps: 0, finalAnswer: "" });
  assert.equal(await exists(join(folder.workspace, "checked.txt")), false);
  assert.deepEqual(await folder.readResult(), outcome.result);
});

test("a failing setup is an errored result with code setup_failed", async (t) => {
  const { task, runDir } = await scriptedTask(t, `workspace:
  setup: ["echo no network; exit 2"]
model:
  provider: scripted
  script:
    - say: never asked
`);
  const outcome = await runTask(onlyTrial(task), runEnv(runDir));
  assert.equal(outcome.kind === "finished" && outcome.result.status, "errored");
  assert.deepEqual(outcome.kind === "finished" && outcome.result.error, { code: "setup_failed", message: "setup command `echo no network; exit 2` exited 2:\nno network\n" });
});

test("a task timeout that fires during setup is an errored result with code timeout", async (t) => {
  const { task, runDir } = await scriptedTask(t, `workspace:
  setup: ["sleep 30"]
limits: { timeout: 200ms }
model:
  provider: scripted
  script:
    - say: never asked
`);
  const started = Date.now();
  const outcome = await runTask(onlyTrial(task), runEnv(runDir));
  assert.ok(Date.now() - started < 5_000, "the setup command was stopped");
  assert.deepEqual(outcome.kind === "finished" && outcome.result.error, { code: "timeout", message: "the task's timeout of 200 ms passed" });
});

test("a check that fails makes the result failed; denials and secrets are reported as the policy and redactor say", async (t) => {
  const { task, runDir, folder } = await scriptedTask(t, `policy: policy.yaml
model:
  provider: scripted
  script:
    - calls:
        - { call: shell, input: { command: "rm -rf src" } }
        - { call: shell, input: { command: "curl example.com" } }
    - say: I could not do it. The token is tok-0123456789.
checks:
  - { name: has src, run: "test -d src" }
`, {
    "suite/policy.yaml": `version: 1
default: deny
rules:
  - allow: { shell: ["echo *"] }
  - deny: { shell: ["rm *"], reason: "no deleting" }
`,
  });
  const approval = new PolicyApproval((await loadPolicy(join(task.file, "..", "policy.yaml"))).policy);
  const outcome = await runTask(onlyTrial(task), runEnv(runDir, { approval, secrets: { DEPLOY_TOKEN: "tok-0123456789" } }));
  assert.equal(outcome.kind, "finished");
  if (outcome.kind !== "finished") return;
  const r = outcome.result;
  assert.equal(r.status, "failed");
  assert.deepEqual(r.checks.map((c) => ({ name: c.name, passed: c.passed, exitCode: c.exitCode })), [{ name: "has src", passed: false, exitCode: 1 }]);
  assert.equal(r.finalAnswer, "I could not do it. The token is [redacted:DEPLOY_TOKEN].");
  assert.equal(r.policyDenials.count, 2);
  assert.deepEqual(r.policyDenials.examples.map((d) => ({ tool: d.tool, rule: d.rule })), [
    { tool: "shell", rule: "rule 2 (policy.yaml:5)" },
    { tool: "shell", rule: null },
  ]);
  assert.equal(r.policyDenials.examples[0]!.reason, "no deleting");
  const events = await readFile(folder.path("events"), "utf8");
  assert.ok(!events.includes("tok-0123456789"), "the event log holds no secret");
});

test("a denial keeps the rule its approval named, one beginning with \"default\" included; only a decision by the default is rule null", async (t) => {
  const { task, runDir, folder } = await scriptedTask(t, `model:
  provider: scripted
  script:
    - calls:
        - { call: shell, input: { command: "rm -rf src" } }
        - { call: shell, input: { command: "curl example.com" } }
        - { call: shell, input: { command: "ls" } }
    - say: done
`);
  const decisions: Decision[] = [
    { decision: "deny", rule: "default-deny-rm", reason: "no rm: not here" },
    { decision: "deny", rule: "default (team policy)", byDefault: true, reason: "nothing allows curl" },
    { decision: "deny", rule: "default", reason: "a rule that is only called default, saw tok-0123456789" },
  ];
  const approval: Approval = { async decide() { return decisions.shift()!; } };
  const outcome = await runTask(onlyTrial(task), runEnv(runDir, { approval, secrets: { DEPLOY_TOKEN: "tok-0123456789" } }));
  assert.equal(outcome.kind, "finished");
  if (outcome.kind !== "finished") return;
  assert.deepEqual(outcome.result.policyDenials, {
    count: 3,
    examples: [
      { tool: "shell", rule: "default-deny-rm", reason: "no rm: not here" },
      { tool: "shell", rule: null, reason: "nothing allows curl" },
      { tool: "shell", rule: "default", reason: "a rule that is only called default, saw [redacted:DEPLOY_TOKEN]" },
    ],
  });
  for (const name of ["session", "journal"] as const) {
    const text = await readFile(folder.path(name), "utf8").catch(() => "");
    assert.ok(!text.includes("tok-0123456789"), `the checkpoint's ${name} keeps no secret in a denial`);
  }
  assert.match(await readFile(folder.path("session"), "utf8") + await readFile(folder.path("journal"), "utf8").catch(() => ""), /saw \[redacted:DEPLOY_TOKEN\]/);
});

test("an unknown throw inside a task (an approval with a bug) is an errored result with code internal, not provider", async (t) => {
  const { task, runDir, folder } = await scriptedTask(t, TAGGING);
  const buggy: Approval = { decide: () => { throw new TypeError("Cannot read properties of undefined (reading 'rules')"); } };
  const outcome = await runTask(onlyTrial(task), runEnv(runDir, { approval: buggy }));
  assert.equal(outcome.kind, "finished");
  if (outcome.kind !== "finished") return;
  const { status, error, checks } = outcome.result;
  assert.deepEqual({ status, error, checks }, { status: "errored", error: { code: "internal", message: "Cannot read properties of undefined (reading 'rules')" }, checks: [] });
  assert.deepEqual(await folder.readResult(), outcome.result);
});

test("a checkpoint the file system refuses stops the task with an OutputError naming the file, no result; fixed, the next run continues it", async (t) => {
  const { task, runDir, folder } = await scriptedTask(t, TAGGING);
  await mkdir(folder.path("journal"), { recursive: true }); // a folder where the journal must go
  await assert.rejects(runTask(onlyTrial(task), runEnv(runDir)), (err: unknown) =>
    err instanceof OutputError && err.code === "output_failed" && err.errno === "EISDIR" && err.path === folder.path("journal") &&
    err.message.startsWith(`cannot write ${folder.path("journal")}: is a folder (EISDIR); `));
  assert.equal(await folder.readResult(), null, "no result: the task is not over");
  await rm(folder.path("journal"), { recursive: true });
  const resumed = await runTask(onlyTrial(task), runEnv(runDir));
  assert.equal(resumed.kind === "finished" && resumed.result.status, "passed");
  assert.equal(resumed.kind === "finished" && resumed.result.resumed, 1);
});

test("the task's timeout covers its checks: the running check is stopped as timed out, the rest not run, the task errored timeout", async (t) => {
  const { task, runDir } = await scriptedTask(t, `limits: { timeout: 1500ms }
model:
  provider: scripted
  script:
    - say: nothing to do
checks:
  - { name: quick, run: "true" }
  - { name: hangs, run: "sleep 30" }
  - { name: later, run: "true" }
`);
  const events: AgentEvent[] = [];
  const outcome = await runTask(onlyTrial(task), runEnv(runDir, { onEvent: (e) => events.push(e) }));
  assert.equal(outcome.kind, "finished");
  const result = outcome.kind === "finished" ? outcome.result : null;
  assert.equal(result?.status, "errored");
  assert.deepEqual(result?.error, { code: "timeout", message: `the task's timeout of 1500 ms passed while check "hangs" ran: it was stopped, and the checks after it did not run` });
  assert.deepEqual(result?.checks.map((c) => [c.name, c.passed, c.timedOut, c.notRun ?? null]),
    [["quick", true, false, null], ["hangs", false, true, null], ["later", false, false, "not run: the task's timeout passed before it started"]]);
  assert.deepEqual(events.filter((e) => e.type === "check_start").map((e) => e.type === "check_start" && e.name), ["quick", "hangs"]);
});

test("checks read the agent's final answer from RHEMA_FINAL_ANSWER, and their events land in events.jsonl", async (t) => {
  const { task, runDir, folder } = await scriptedTask(t, `model:
  provider: scripted
  script:
    - say: "The answer is 42."
checks:
  - { name: answer, run: 'grep -qx "The answer is 42." "$RHEMA_FINAL_ANSWER"' }
`);
  const outcome = await runTask(onlyTrial(task), runEnv(runDir));
  assert.equal(outcome.kind === "finished" && outcome.result.status, "passed");
  const logged = (await readFile(folder.path("events"), "utf8")).trim().split("\n").map((l) => JSON.parse(l).type);
  assert.deepEqual(logged.filter((type) => type.startsWith("check_")), ["check_start", "check_end"]);
});

test("a kill while task-state.json was being written (a temp file beside it) loses no finished setup: it is not run again, and the temp is removed", async (t) => {
  const { task, runDir, folder, root } = await scriptedTask(t, `workspace:
  setup:
    - echo ran >> ../../../../../../../setup-runs.txt
model:
  provider: scripted
  script:
    - say: done
`);
  const controller = new AbortController();
  // A first run that sets up, then is interrupted at the turn's first event.
  const first = await runTask(onlyTrial(task), runEnv(runDir, { signal: controller.signal, onEvent: (e) => { if (e.type === "turn_start") controller.abort(); } }));
  assert.equal(first.kind, "interrupted");
  const state = await folder.readState();
  assert.equal(state?.setupDone, true);
  // As a SIGKILL inside write-file-atomic leaves it: the old file whole, a torn temp beside it.
  await writeFile(`${folder.path("state")}.2841983345`, '{"version": 1, "setupDone": fal');
  const second = await runTask(onlyTrial(task), runEnv(runDir));
  assert.equal(second.kind === "finished" && second.result.status, "passed");
  assert.equal(await readFile(join(root, "setup-runs.txt"), "utf8"), "ran\n", "the setup ran once");
  assert.deepEqual((await readdir(folder.dir)).filter((e) => /\.\d+$/.test(e)), []);
});
