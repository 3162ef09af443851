/**
 * The bundled action on the example suite, run as GitHub's runner runs it (Node 24, INPUT_*,
 * GITHUB_OUTPUT, GITHUB_STEP_SUMMARY): outputs, the summary appended, annotations in workflow
 * command syntax, the step's exit code under each `fail-on`, and bad inputs named.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "../support/paths.js";
import { assertValid, publishedSchemas } from "../support/published-schemas.js";
import { readJson } from "../support/run-dir.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { prepareJob, runStep, taskGroups, workflowCommands } from "./action-harness.js";

test("runs the example suite: outputs, summary appended, annotations, exit code per fail-on", async (t) => {
  const job = await prepareJob(await tempDir(t, "rhema-action-"));
  await cp(join(repoRoot, "tasks"), join(job.workspace, "tasks"), { recursive: true });
  const summaryFile = join(job.runnerDir, "summary.md");
  await writeFile(summaryFile, "# an earlier step's summary\n");
  const inputs = { tasks: "tasks/arithmetic\ntasks/release", "fail-on": "failure", resume: "false" };

  const first = await runStep(job, { inputs });
  assert.equal(first.code, 1, first.stdout + first.stderr);
  const runDir = join(job.workspace, ".rhema/runs/latest");
  const { ["cache-hit-rate"]: hitRate, ["cache-read-tokens"]: cacheRead, ["cache-write-tokens"]: cacheWrite, ["output-tokens"]: outTokens, ["reasoning-tokens"]: reasoningTokens, ["input-tokens"]: inTokens, ["cost-usd"]: costUsd, changes, ...rest } = first.outputs;
  assert.deepEqual(rest, {
    junit: join(runDir, "junit.xml"), stats: join(runDir, "stats.json"), summary: join(runDir, "summary.md"), "run-dir": runDir,
    // Tasks by their gate: arithmetic/flaky-fix passes at 3 of its 5 trials (rate 0.5), flaky.
    passed: "3", failed: "2", errored: "0", stopped: "0", interrupted: "0",
    trials: "9", flaky: "1", "pass-rate": "0.5556",
    // No baseline input: nothing compared.
    regressed: "0", improved: "0",
    // No artifact service here (no ACTIONS_RUNTIME_TOKEN): nothing uploaded, a warning below.
    "report-url": "",
    // No task has `output:`: no structured answer, no answers file.
    answer: "", "answers-file": "",
  });
  const stats = await readJson<{ total: { stats: { cacheHitRate: number; cacheReadTokens: number; cacheWriteTokens: number; outputTokens: number; reasoningTokens: number; inputTokens: number } } }>(join(runDir, "stats.json"));
  assert.deepEqual(
    { hitRate, cacheRead, cacheWrite, outTokens, reasoningTokens, inTokens },
    { hitRate: stats.total.stats.cacheHitRate.toFixed(4), cacheRead: String(stats.total.stats.cacheReadTokens), cacheWrite: String(stats.total.stats.cacheWriteTokens), outTokens: String(stats.total.stats.outputTokens), reasoningTokens: String(stats.total.stats.reasoningTokens), inTokens: String(stats.total.stats.inputTokens) },
  );
  assert.ok(Number(cacheRead) > 0);
  // One changes.patch per trial: the flaky task's five and one each for the other four tasks.
  const patches = changes!.split("\n");
  assert.equal(patches.length, 9, changes);
  for (const p of patches) assert.ok(p.startsWith(join(runDir, "tasks")) && p.endsWith("/changes.patch") && existsSync(p), p);
  assert.equal(costUsd, "unpriced", "scripted tasks without priceAs have no price: never 0");

  const summary = await readFile(summaryFile, "utf8");
  assert.ok(summary.startsWith("# an earlier step's summary\n"), "appended, not overwritten");
  assert.ok(summary.includes(await readFile(join(runDir, "summary.md"), "utf8")));

  const errors = workflowCommands(first.stdout, "error");
  // The failing check's error line is its assertion, the same on Node 20 and 22 (TAP) and 24 (spec).
  assert.equal(errors[0], '::error title=arithmetic/wrong-fix,file=tasks/arithmetic/wrong-fix.yaml::check "unit tests" failed (exit code 1): AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:');
  assert.deepEqual(errors.slice(1), [
    '::error title=release/publish,file=tasks/release/publish.yaml::check "release pushed" failed (exit code 1)',
    "::error::rhema: 2 tasks did not pass: arithmetic/wrong-fix, release/publish",
  ]);
  assert.deepEqual(workflowCommands(first.stdout, "warning"), [
    // Uploaded (and warned of) before the summary and the annotations, which would link it.
    `::warning title=rhema%3A no report artifact::rhema: report.html and the reports were not uploaded as the artifact rhema-report-suite-all-1: no artifact service here (ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL unset); they stay in ${runDir}`,
    // The flaky task passed its gate: its failed trials are a warning, not an error.
    '::warning title=arithmetic/flaky-fix,file=tasks/arithmetic/flaky-fix.yaml::flaky: 2 of 5 trials failed, the gate (rate >= 0.5) passed; first: trial 3/5: check "unit tests" failed (exit code 1): AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:',
    "::warning title=release/publish,file=tasks/release/publish.yaml::2 tool calls denied by policy: write_file (rule 6 (ci.yaml:11): CI configuration and secrets are off limits); shell (rule 5 (ci.yaml:10): no pushes from CI)",
  ]);
  // Each task's lines are one group, printed when it ends and titled with its outcome; the live lines stay outside.
  const groups = taskGroups(first.stdout);
  const flakyTrials = ["✔ arithmetic/flaky-fix#1: passed", "✔ arithmetic/flaky-fix#2: passed", "✖ arithmetic/flaky-fix#3: failed", "✖ arithmetic/flaky-fix#4: failed", "✔ arithmetic/flaky-fix#5: passed"];
  assert.deepEqual(groups.map((g) => g.title).sort(), ["✔ arithmetic/add-multiply: passed", "✔ arithmetic/fix-add: passed", ...flakyTrials, "✖ arithmetic/wrong-fix: failed", "✖ release/publish: failed"].sort(), first.stdout);
  const wrongFix = groups.find((g) => g.title.includes("wrong-fix"))!;
  assert.ok(wrongFix.lines.some((l) => /^\d\d:\d\d:\d\d step 1 /.test(l)), wrongFix.lines.join("\n"));
  assert.ok(wrongFix.lines.some((l) => /check 1\/1 "unit tests" failed \(exit 1\)/.test(l)), wrongFix.lines.join("\n"));
  assert.deepEqual(first.stdout.split("\n").filter((l) => l.startsWith("▶ ")).sort(),
    ["▶ arithmetic/add-multiply", "▶ arithmetic/fix-add", ...[1, 2, 3, 4, 5].map((n) => `▶ arithmetic/flaky-fix#${n}`), "▶ arithmetic/wrong-fix", "▶ release/publish"]);
  const [notice, ...moreNotices] = workflowCommands(first.stdout, "notice");
  assert.deepEqual(moreNotices, []);
  assert.match(notice!, /^::notice title=rhema::5 tasks \(9 trials\): 3 passed, 2 failed, 0 errored; cost unpriced; tokens in \d+, cache read \d+, cache write \d+, out \d+; cache hit rate 0\.\d{4}$/);

  // Same run directory: every task is kept, so these only decide the exit code.
  const onError = await runStep(job, { inputs: { ...inputs, "fail-on": "error" } });
  assert.equal(onError.code, 0, onError.stdout);
  assert.match(onError.stdout, /kept from an earlier attempt/);
  const never = await runStep(job, { inputs: { ...inputs, "fail-on": "never" } });
  assert.equal(never.code, 0, never.stdout);
  assert.equal(never.outputs.failed, "2");

  // A task the agent fails (the step cap) fails the step under fail-on: error.
  const capped = await runStep(job, { inputs: { tasks: "tasks/arithmetic", filter: "arithmetic/wrong-fix", "max-steps": "1", out: ".rhema/capped", "fail-on": "error", resume: "false" } });
  assert.equal(capped.code, 1, capped.stdout);
  assert.deepEqual([capped.outputs.passed, capped.outputs.errored], ["0", "1"]);
  assert.deepEqual(workflowCommands(capped.stdout, "error").slice(-1), ["::error::rhema: 1 task errored: arithmetic/wrong-fix"]);
});

test("a bad input fails the step naming the input, without a stack trace", async (t) => {
  const job = await prepareJob(await tempDir(t, "rhema-action-"));
  await cp(join(repoRoot, "tasks"), join(job.workspace, "tasks"), { recursive: true });
  const step = await runStep(job, { inputs: { tasks: "tasks/arithmetic", concurrency: "0" } });
  assert.equal(step.code, 1);
  assert.deepEqual(workflowCommands(step.stdout, "error"), ['::error::rhema: input "concurrency": Expected a whole number from 1 and up, got "0"']);
  assert.doesNotMatch(step.stdout + step.stderr, /\n\s+at /);
});

test("where bwrap cannot make namespaces (AppArmor): sandbox: bwrap fails the step before anything runs, sandbox: auto warns in the job summary; both name the sysctl fix", async (t) => {
  const root = await tempDir(t, "rhema-action-");
  const job = await prepareJob(root);
  await cp(join(repoRoot, "tasks"), join(job.workspace, "tasks"), { recursive: true });
  // A bwrap early on PATH that fails as GitHub's ubuntu-24.04 runners make the real one fail.
  const fakeBin = join(root, "fake-bin");
  await mkdir(fakeBin);
  await writeFile(join(fakeBin, "bwrap"), "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n", { mode: 0o755 });
  const env = { PATH: `${fakeBin}:${process.env.PATH ?? "/usr/bin:/bin"}` };
  const sysctl = /sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0/;

  const bwrap = await runStep(job, { inputs: { tasks: "tasks/arithmetic", sandbox: "bwrap", resume: "false" }, env });
  assert.equal(bwrap.code, 1);
  const [error, ...moreErrors] = workflowCommands(bwrap.stdout, "error");
  assert.deepEqual(moreErrors, []);
  assert.match(error!, /^::error::rhema: the bwrap sandbox was asked for \(the `sandbox` input\) but cannot be made here: bwrap said "bwrap: setting up uid map: Permission denied"/);
  assert.match(error!, sysctl);
  assert.deepEqual(bwrap.outputs, {});
  assert.equal(existsSync(join(job.workspace, ".rhema")), false, "nothing ran, nothing was written");

  const auto = await runStep(job, { inputs: { tasks: "tasks/arithmetic", filter: "arithmetic/fix-add", sandbox: "auto", resume: "false" }, env });
  assert.equal(auto.code, 0, auto.stdout);
  const [warning] = workflowCommands(auto.stdout, "warning");
  assert.match(warning!, /^::warning title=rhema ran without a sandbox::rhema: warning: NO SANDBOX: .*setting up uid map: Permission denied/);
  const summary = await readFile(join(job.runnerDir, "summary.md"), "utf8");
  assert.match(summary, /> \*\*No sandbox:\*\* the commands of 1 task ran unsandboxed \(`sandbox: auto`, bwrap unusable\): .*setting up uid map: Permission denied/);
  assert.match(summary, sysctl);
  const stats = await readJson<{ total: { sandbox: { mode: string } } }>(auto.outputs.stats!);
  assert.equal(stats.total.sandbox.mode, "none");
});

test("max-cost stops the run's tasks on its budget: the stopped output counts them, and fail-on failure fails the step", async (t) => {
  const job = await prepareJob(await tempDir(t, "rhema-action-"));
  const task = (id: string) => `prompt: Write two files.
model:
  provider: scripted
  priceAs: claude-sonnet-4-5
  script:
    - call: write_file
      input: { path: ${id}-1.txt, content: one }
    - call: write_file
      input: { path: ${id}-2.txt, content: two }
    - say: done
policy: { version: 1, default: allow, rules: [] }
`;
  await writeFiles(job.workspace, { "suite/a.yaml": task("a"), "suite/b.yaml": task("b") });
  const inputs = { tasks: "suite", concurrency: "1", "max-cost": "0.001", "fail-on": "failure", resume: "false" };
  const step = await runStep(job, { inputs });
  assert.equal(step.code, 1, step.stdout + step.stderr);
  assert.ok(step.outputs.stopped !== undefined, step.stdout + step.stderr);
  assert.deepEqual([step.outputs.passed, step.outputs.failed, step.outputs.errored, step.outputs.stopped], ["0", "0", "0", "2"]);
  assert.match(workflowCommands(step.stdout, "error").join("\n"), /stopped: the run's cost budget of \$0\.0010 is spent/);
  // stopped-ok: the same stopped tasks, kept, no longer fail the step; max-tokens stops them likewise.
  const ok = await runStep(job, { inputs: { ...inputs, "stopped-ok": "true" } });
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.deepEqual([ok.outputs.passed, ok.outputs.stopped], ["0", "2"]);
  const tokens = await runStep(job, { inputs: { tasks: "suite", concurrency: "1", "max-tokens": "1", out: ".rhema/tokens", resume: "false" } });
  assert.equal(tokens.code, 1, tokens.stdout + tokens.stderr);
  assert.match(workflowCommands(tokens.stdout, "error").join("\n"), /stopped: the run's token budget of 1 is spent/);
  const never = await runStep(job, { inputs: { ...inputs, "max-cost": "5", "fail-on": "never" } });
  assert.equal(never.code, 0, never.stdout);
  assert.deepEqual([never.outputs.passed, never.outputs.stopped], ["2", "0"], "a larger budget continues both");
});

test("bad task, policy and pricing files: an error annotation on each problem's file, line and column, a job summary saying what was wrong, the inputs named", async (t) => {
  const job = await prepareJob(await tempDir(t, "rhema-action-"));
  await writeFiles(job.workspace, {
    "suite/typo.yaml": "prompt: Say done.\nmodel: { provider: scripted, script: [{ say: done }] }\nlimits: { timout: 3 }\n",
    "suite/ok.yaml": "prompt: Say done.\nmodel: { provider: scripted, script: [{ say: done }] }\n",
    "ci/policy.yaml": "version: 1\ndefault: deny\nrules:\n  - allow: { tols: [read_file] }\n",
    "ci/pricing.yaml": "version: 1\nmodels:\n  - { provider: anthropic, model: m, inputPerMTok: -1, outputPerMTok: 1 }\n",
  });
  const summaryFile = join(job.runnerDir, "summary.md");
  const run = (inputs: Record<string, string>) => runStep(job, { inputs: { resume: "false", ...inputs } });

  const task = await run({ tasks: "suite" });
  assert.equal(task.code, 1, task.stdout + task.stderr);
  const [taskError, taskFailure, ...more] = workflowCommands(task.stdout, "error");
  assert.equal(taskError, "::error title=invalid task file,file=suite/typo.yaml,line=3,col=11::limits.timout: unknown key; did you mean `timeout`? (expected one of: maxSteps, timeout, streamIdle, maxCostUsd, maxTokens)");
  assert.match(taskFailure!, /^::error::rhema: the run did not start: 1 problem in 1 file \(each annotated on its file; the job summary lists them\):%0Asuite\/typo\.yaml:3:11: limits\.timout: unknown key/);
  assert.deepEqual(more, []);
  assert.doesNotMatch(task.stdout + task.stderr, /\n\s+at /);
  const taskSummary = await readFile(summaryFile, "utf8");
  assert.match(taskSummary, /^## rhema: the run did not start\n\nNothing ran: fix what is listed here/);
  assert.match(taskSummary, /^- `suite\/typo\.yaml:3:11` \(task file\): limits\.timout: unknown key; did you mean `timeout`\?/m);
  assert.equal(existsSync(join(job.workspace, ".rhema")), false, "nothing ran");

  // The policy input's file: the annotation and the summary say it is the input's.
  const policy = await run({ tasks: "suite/ok.yaml", policy: "ci/policy.yaml" });
  assert.equal(policy.code, 1, policy.stdout + policy.stderr);
  const [policyError] = workflowCommands(policy.stdout, "error");
  assert.equal(policyError, "::error title=invalid policy file (the policy input),file=ci/policy.yaml,line=4,col=14::rules.0.allow: unknown key `tols`; did you mean `tools`?");
  assert.match(await readFile(summaryFile, "utf8"), /^- `ci\/policy\.yaml:4:14` \(policy file, the `policy` input\): rules\.0\.allow: unknown key `tols`/m);

  const pricing = await run({ tasks: "suite/ok.yaml", pricing: "ci/pricing.yaml" });
  assert.equal(pricing.code, 1, pricing.stdout + pricing.stderr);
  const [pricingError] = workflowCommands(pricing.stdout, "error");
  assert.match(pricingError!, /^::error title=invalid pricing file \(the pricing input\),file=ci\/pricing\.yaml,line=3,col=\d+::models\.0\.inputPerMTok: a price cannot be negative/);

  // A file the input names that does not exist: no file= (GitHub cannot show it); the message names the input and the path.
  const missing = await run({ tasks: "suite/ok.yaml", policy: "ci/nope.yaml" });
  assert.equal(missing.code, 1);
  const [missingError] = workflowCommands(missing.stdout, "error");
  assert.match(missingError!, /^::error title=invalid policy file \(the policy input\)::ci\/nope\.yaml: cannot read the policy file: ENOENT/);

  // An error of no file names the input, not the flag, in the failure and the summary.
  const shard = await run({ tasks: "suite", shard: "3/2" });
  assert.equal(shard.code, 1);
  assert.deepEqual(workflowCommands(shard.stdout, "error"), ['::error::rhema: Expected the `shard` input as i/n with 1 ≤ i ≤ n (e.g. 2/3), got "3/2"']);
  assert.match(await readFile(summaryFile, "utf8"), /## rhema: the run did not start\n\nNothing ran[^\n]*\n\n```\nExpected the `shard` input as i\/n/);
});

test("the pricing input prices a model the bundled table lacks: cost-usd reads its dollars, not unpriced", async (t) => {
  const job = await prepareJob(await tempDir(t, "rhema-action-"));
  await writeFiles(job.workspace, {
    "suite/a.yaml": `prompt: Say done.
model: { provider: scripted, priceAs: house-model-1, script: [{ say: done }] }
policy: { version: 1, default: deny, rules: [] }
`,
    // $1,000 per million tokens either way: dollars = tokens / 1000, never 0 for a request.
    "pricing.yaml": "version: 1\nmodels:\n  - { provider: anthropic, model: house-model-1, inputPerMTok: 1000, outputPerMTok: 1000 }\n",
  });
  const unpriced = await runStep(job, { inputs: { tasks: "suite", resume: "false", out: ".rhema/unpriced" } });
  assert.equal(unpriced.outputs["cost-usd"], "unpriced", unpriced.stdout + unpriced.stderr);
  const priced = await runStep(job, { inputs: { tasks: "suite", resume: "false", pricing: "pricing.yaml", out: ".rhema/priced" } });
  assert.equal(priced.code, 0, priced.stdout + priced.stderr);
  const stats = await readJson<{ total: { cost: { usd: number } } }>(priced.outputs.stats!);
  assert.ok(stats.total.cost.usd > 0);
  assert.equal(priced.outputs["cost-usd"], stats.total.cost.usd.toFixed(6));
});

test("structured output: one task × one trial sets the answer output to its JSON; several trials set answers-file to a map by trial key", async (t) => {
  const job = await prepareJob(await tempDir(t, "rhema-action-"));
  const task = (n: number) => `prompt: Count.
model:
  provider: scripted
  script:
    - call: final_answer
      input: { n: ${n} }
output: { schema: { type: object, properties: { n: { type: integer } }, required: [n] } }
`;
  await writeFiles(job.workspace, { "one/a.yaml": task(1), "two/a.yaml": task(2), "two/b.yaml": task(3) });
  const one = await runStep(job, { inputs: { tasks: "one", resume: "false", out: ".rhema/one" } });
  assert.equal(one.code, 0, one.stdout + one.stderr);
  assert.deepEqual([one.outputs.answer, one.outputs["answers-file"]], ['{"n":1}', ""]);
  const two = await runStep(job, { inputs: { tasks: "two", resume: "false", out: ".rhema/two" } });
  assert.equal(two.code, 0, two.stdout + two.stderr);
  assert.equal(two.outputs.answer, "");
  const answers: unknown = JSON.parse(await readFile(two.outputs["answers-file"]!, "utf8"));
  assert.deepEqual(answers, { "two/a#1": { n: 2 }, "two/b#1": { n: 3 } });
  assertValid(publishedSchemas().validator("answers.schema.json"), answers, "answers.json");
});
