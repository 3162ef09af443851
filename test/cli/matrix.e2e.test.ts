/**
 * The matrix through the built CLI (issue 22): a matrix file's cells are variants; trials are
 * task × variant × repeat, each in `tasks/<suite>/<id>/<variant>/<n>/`; reports per (task,
 * variant); shards hold whole pairs and merge into the unsharded run; a cell changed on resume is
 * a changed task; a cell's budget stops that cell's trials (seeded on resume) while the others run
 * on; a kill mid-matrix resumes each trial once; `validate` prints the cells and the pins and
 * refuses what `run` refuses.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, readFile, readdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli, startCli } from "../support/cli.js";
import { readJson } from "../support/run-dir.js";
import { OPEN_POLICY, shellStepsTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";

/** Two steps (a list_dir call, then a word); by repeat the word is good, bad, good; the check wants good. */
const VERDICT_TASK = `prompt: Say whether it is good.
model:
  provider: scripted
  pick: repeat
  scripts:
    - script: [{ call: list_dir, input: { path: "." } }, { say: good }]
    - script: [{ call: list_dir, input: { path: "." } }, { say: bad }]
    - script: [{ call: list_dir, input: { path: "." } }, { say: good }]
checks:
  - { name: good, run: 'grep -qx good "$RHEMA_FINAL_ANSWER"' }
`;

/** 2 models (scripted, priced as two real models) × 2 step budgets: one step cannot finish the two-step script. */
const MATRIX = `matrix:
  model:
    - { id: sonnet, provider: scripted, priceAs: claude-sonnet-4-6 }
    - { id: haiku, provider: scripted, priceAs: claude-haiku-4-5 }
  limits:
    - { id: s1, maxSteps: 1 }
    - { id: s5, maxSteps: 5 }
`;

const CELLS = ["model=sonnet,limits=s1", "model=sonnet,limits=s5", "model=haiku,limits=s1", "model=haiku,limits=s5"];

interface TrialsEntry { suite: string; id: string; variant?: string; status: string; counted: number; passes: number; passRate: { rate: number; lower: number; upper: number } | null; costPerPass: { kind: string; usd?: number } }
interface ResultFile { status: string; steps: number; cost?: { usd: number | null } | null; trial: { repeat: number; variant: string | null } }

/** The Wilson 95 % interval of c of n, computed here apart from the code under test. */
function wilson(c: number, n: number): { lower: number; upper: number } {
  const z = 1.959963984540054;
  const p = c / n;
  const centre = p + (z * z) / (2 * n);
  const half = z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  const denominator = 1 + (z * z) / n;
  return { lower: (centre - half) / denominator, upper: (centre + half) / denominator };
}

async function suite(t: Parameters<typeof tempDir>[0]): Promise<string> {
  const root = await tempDir(t);
  await writeFiles(root, { "suite/verdict.yaml": VERDICT_TASK, "matrix.yaml": MATRIX });
  return root;
}

const RUN = ["--matrix", "matrix.yaml", "--repeats", "3", "--sandbox", "off", "--concurrency", "4"];

test("2 models × 2 step budgets × 3 repeats: 4 cells, 12 trials in their own folders, per-cell figures as computed by hand", async (t) => {
  const root = await suite(t);
  const validated = await runCli(["validate", "suite", "--matrix", "matrix.yaml"], { cwd: root });
  assert.equal(validated.code, 0, validated.stderr);
  assert.match(validated.stdout, /valid: 1 task × 4 cells of the matrix in 1 suite/);
  for (const cell of CELLS) assert.match(validated.stdout, new RegExp(`  cell ${cell}\\n`));

  const out = join(root, "run");
  const ran = await runCli(["run", "suite", "--out", out, ...RUN], { cwd: root });
  assert.equal(ran.code, 1, ran.stderr);
  const manifest = await readJson<{ variants: string[]; cells: { variant: string; hash: string }[]; tasks: { variant: string; trials: number }[] }>(join(out, "manifest.json"));
  assert.deepEqual(manifest.variants, CELLS);
  assert.deepEqual(manifest.cells.map((c) => c.variant), CELLS);
  assert.deepEqual(manifest.tasks.map((task) => [task.variant, task.trials]).sort(), CELLS.map((c) => [c, 3]).sort());
  assert.deepEqual((await readdir(join(out, "tasks", "suite", "verdict"))).sort(), [...CELLS].sort());

  const stats = await readJson<{ taskTrials: TrialsEntry[] }>(join(out, "stats.json"));
  assert.equal(stats.taskTrials.length, 4);
  for (const cell of CELLS) {
    const results: ResultFile[] = [];
    for (const n of [1, 2, 3]) results.push(await readJson<ResultFile>(join(out, "tasks", "suite", "verdict", cell, String(n), "result.json")));
    assert.deepEqual(results.map((r) => r.trial), [1, 2, 3].map((repeat) => ({ repeat, variant: cell })));
    const entry = stats.taskTrials.find((e) => e.variant === cell)!;
    assert.equal(entry.counted, 3);
    if (cell.endsWith("s1")) {
      // One step cannot reach the answer: every trial is step-capped (errored), none passes.
      assert.deepEqual(results.map((r) => [r.status, r.steps]), [["errored", 1], ["errored", 1], ["errored", 1]]);
      assert.equal(entry.status, "errored");
      assert.equal(entry.passes, 0);
      assert.equal(entry.costPerPass.kind, "no-pass");
    } else {
      // good, bad, good: 2 of 3 with their interval; cost per pass = the cell's dollars ÷ 2.
      assert.deepEqual(results.map((r) => r.status), ["passed", "failed", "passed"]);
      assert.equal(entry.status, "failed");
      assert.equal(entry.passes, 2);
      const hand = wilson(2, 3);
      assert.ok(Math.abs(entry.passRate!.rate - 2 / 3) < 1e-12);
      assert.ok(Math.abs(entry.passRate!.lower - hand.lower) < 1e-9 && Math.abs(entry.passRate!.upper - hand.upper) < 1e-9);
      const dollars = results.reduce((sum, r) => sum + (r.cost?.usd ?? NaN), 0);
      assert.ok(Math.abs(entry.costPerPass.usd! - dollars / 2) < 1e-12, `${entry.costPerPass.usd} vs ${dollars / 2}`);
    }
  }
  // Priced as two models: the sonnet cells cost more than the haiku ones for the same requests.
  const perPass = (cell: string) => stats.taskTrials.find((e) => e.variant === cell)!.costPerPass.usd!;
  assert.ok(perPass("model=sonnet,limits=s5") > perPass("model=haiku,limits=s5"));

  // JUnit: one testcase per (task, variant), `id [variant]`; properties `task.<id>@<variant>.*`.
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  const names = [...junit.matchAll(/<testcase classname="suite" name="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(names, [...CELLS].sort().map((c) => `verdict [${c}]`));
  assert.match(junit, /<property name="task\.verdict@model=sonnet,limits=s5\.passes" value="2"\/>/);
  assert.match(junit, /<property name="task\.verdict@model=haiku,limits=s1\.passes" value="0"\/>/);
  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.match(summary, /`suite\/verdict@model=haiku,limits=s5` \| 2\/3 \| 66\.7%/);
});

test("shards hold whole (task, variant) pairs, and 4 shards merged equal the unsharded run", async (t) => {
  const root = await suite(t);
  await writeFiles(root, { "suite/second.yaml": VERDICT_TASK.replace("pick: repeat", "pick: repeat\n  priceAs: claude-sonnet-4-6") });
  const whole = await runCli(["run", "suite", "--out", join(root, "run-0"), ...RUN], { cwd: root });
  assert.equal(whole.code, 1, whole.stderr);
  // Run directories' paths of one length: the prompt names the workspace, so its tokens (and cost) would differ.
  const owners = new Map<string, number>();
  for (const i of [1, 2, 3, 4]) {
    const shard = await runCli(["run", "suite", "--out", join(root, `run-${i}`), "--shard", `${i}/4`, ...RUN], { cwd: root });
    assert.ok(shard.code === 0 || shard.code === 1, shard.stderr);
    const manifest = await readJson<{ tasks: { id: string; variant: string }[] }>(join(root, `run-${i}`, "manifest.json"));
    for (const task of manifest.tasks) {
      const key = `${task.id}@${task.variant}`;
      assert.equal(owners.has(key), false, `${key} in two shards`);
      owners.set(key, i);
      // Every trial of the pair is in this shard.
      assert.deepEqual((await readdir(join(root, `run-${i}`, "tasks", "suite", task.id, task.variant))).sort(), ["1", "2", "3"]);
    }
  }
  assert.equal(owners.size, 8, "2 tasks × 4 cells, each in exactly one shard");
  assert.ok(new Set(owners.values()).size > 1, "the pairs spread over the shards");
  const merged = await runCli(["report", "merge", ...[1, 2, 3, 4].map((i) => join(root, `run-${i}`)), "--out", join(root, "merged")], { cwd: root });
  assert.equal(merged.code, 0, merged.stderr);
  const figures = async (dir: string) => (await readJson<{ taskTrials: TrialsEntry[] }>(join(dir, "stats.json"))).taskTrials
    .map((e) => ({ id: e.id, variant: e.variant, status: e.status, counted: e.counted, passes: e.passes, passRate: e.passRate, costPerPass: e.costPerPass }));
  assert.deepEqual(await figures(join(root, "merged")), await figures(join(root, "run-0")));
  const cases = async (dir: string) => [...(await readFile(join(dir, "junit.xml"), "utf8")).matchAll(/<testcase classname="[^"]+" name="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(await cases(join(root, "merged")), await cases(join(root, "run-0")));
});

test("a cell changed on resume is a changed task: exit 2 naming it (not the unchanged cell), or started afresh with --restart-changed", async (t) => {
  const root = await tempDir(t);
  // Only the matrix file changes between runs, and in it only env=a's overrides: the task file's
  // bytes and env=b stay as they were, so nothing but env=a's overrides in its hash can tell.
  const matrix = (flavourA: string) => `matrix:\n  env:\n    - { id: a, vars: { FLAVOUR: ${flavourA} } }\n    - { id: b, vars: { FLAVOUR: salty } }\n`;
  await writeFiles(root, {
    "suite/env.yaml": "prompt: Say ok.\nmodel: { provider: scripted, script: [{ say: ok }] }\nchecks:\n  - { name: flavour, run: 'test \"$FLAVOUR\" != sour' }\n",
    "matrix.yaml": matrix("sweet"),
  });
  const args = ["run", "suite", "--out", "run", "--matrix", "matrix.yaml", "--sandbox", "off"];
  const first = await runCli(args, { cwd: root });
  assert.equal(first.code, 0, first.stderr);
  await writeFile(join(root, "matrix.yaml"), matrix("sour"));
  const changed = await runCli(args, { cwd: root });
  assert.equal(changed.code, 2, changed.stderr);
  assert.match(changed.stderr, /suite\/env@env=a/);
  assert.doesNotMatch(changed.stderr, /suite\/env@env=b/);
  const restarted = await runCli([...args, "--restart-changed", "--json"], { cwd: root });
  assert.equal(restarted.code, 1, restarted.stderr);
  const result = (cell: string) => readJson<{ status: string }>(join(root, "run", "tasks", "suite", "env", cell, "1", "result.json"));
  assert.equal((await result("env=a")).status, "failed", "env=a ran again, with FLAVOUR=sour");
  assert.equal((await result("env=b")).status, "passed");
  const kept = restarted.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { type: string; kept?: boolean; trial?: string })
    .filter((p) => p.type === "task_end").map((p) => [p.trial, p.kept]).sort();
  assert.deepEqual(kept, [["suite/env@env=a", false], ["suite/env@env=b", true]]);
});

/** Three requests (two list_dir calls, then a word): a trial's cost is spread over its requests. */
const LOOKING_TASK = `prompt: Look twice, then say done.
model:
  provider: scripted
  script: [{ call: list_dir, input: { path: "." } }, { call: list_dir, input: { path: "." } }, { say: done }]
`;

const PRICED_MODELS = `matrix:
  model:
    - { id: sonnet, provider: scripted, priceAs: claude-sonnet-4-6 }
    - { id: haiku, provider: scripted, priceAs: claude-haiku-4-5 }
`;

interface BudgetResult { status: string; steps: number; cost: { usd: number } | null; budget?: { scope: string; measure: string; limit: number; spent: number }; stats: { requests: number } }

test("a cell's budget stops its trials across tasks (stopped, scope cell) while another cell runs on; a resume counts the cell's earlier spend", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "suite/a.yaml": LOOKING_TASK, "suite/b.yaml": LOOKING_TASK, "matrix.yaml": PRICED_MODELS });
  const run = (repeats: number) => runCli(["run", "suite", "--out", "run", "--matrix", "matrix.yaml", "--repeats", String(repeats), "--sandbox", "off", "--concurrency", "1"], { cwd: root });
  const result = (id: string, cell: string, n: number) => readJson<BudgetResult>(join(root, "run", "tasks", "suite", id, `model=${cell}`, String(n), "result.json"));
  // First, one trial per (task, cell) and no budget: what one trial of each task costs as sonnet.
  const first = await run(1);
  assert.equal(first.code, 0, first.stderr);
  const costA = (await result("a", "sonnet", 1)).cost!.usd;
  const costB = (await result("b", "sonnet", 1)).cost!.usd;
  assert.ok(costA > 0 && costB > 0);
  // Then three trials each, the sonnet cells capped at what the first run spent plus half a trial:
  // a@sonnet#2 starts (spent so far < cap), crosses the cap mid-way and stops; the rest never start.
  const cap = costA + costB + costA / 2;
  await writeFile(join(root, "matrix.yaml"), `${PRICED_MODELS}  include:\n    - { model: sonnet, budget: { maxCostUsd: ${cap} } }\n`);
  const capped = await run(3);
  assert.equal(capped.code, 1, capped.stderr);
  assert.deepEqual((await result("a", "sonnet", 1)).status, "passed", "kept from the first run");
  const cut = await result("a", "sonnet", 2);
  assert.equal(cut.status, "stopped");
  assert.ok(cut.steps >= 1 && cut.stats.requests < 3, `stopped mid-way: ${cut.steps} steps, ${cut.stats.requests} requests`);
  assert.equal(cut.budget!.scope, "cell");
  assert.equal(cut.budget!.limit, cap);
  // The cell's spend counts the first run's trials of both tasks, seeded on resume.
  assert.ok(cut.budget!.spent >= cap && cut.budget!.spent > costA + costB + cut.cost!.usd - 1e-12, JSON.stringify(cut.budget));
  for (const [id, n] of [["a", 3], ["b", 2], ["b", 3]] as const) {
    const never = await result(id, "sonnet", n);
    assert.deepEqual([never.status, never.steps, never.budget!.scope, never.budget!.measure], ["stopped", 0, "cell", "cost"], `${id}#${n}`);
  }
  for (const id of ["a", "b"]) for (const n of [1, 2, 3]) assert.equal((await result(id, "haiku", n)).status, "passed", `${id}@haiku#${n} runs on`);
  assert.match(capped.stdout, /Stopped: suite\/a@model=sonnet#2: the cell's cost budget of \$0\.\d+ is spent/);
  assert.match(capped.stdout, /Stopped: suite\/b@model=sonnet#3: not started: the cell's budget was spent/);
  const stats = await readJson<{ tasks: { id: string; trial: { variant: string; repeat: number }; budget: { scope: string } | null }[] }>(join(root, "run", "stats.json"));
  assert.deepEqual(stats.tasks.filter((e) => e.budget !== null).map((e) => `${e.id}@${e.trial.variant}#${e.trial.repeat}:${e.budget!.scope}`).sort(),
    ["a@model=sonnet#2:cell", "a@model=sonnet#3:cell", "b@model=sonnet#2:cell", "b@model=sonnet#3:cell"]);
  // The same budget again: every stopped trial stays stopped, and says so.
  const again = await run(3);
  assert.equal(again.code, 1, again.stderr);
  assert.match(again.stdout + again.stderr, /suite\/b@model=sonnet#3 stays stopped: not started: the cell's budget was spent — the cell's cost budget/);
  assert.equal((await result("b", "sonnet", 3)).steps, 0);
});

test("a cell's cost budget on an unpriced model is exit 2 before anything runs, in validate and run", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "suite/a.yaml": LOOKING_TASK,
    "matrix.yaml": "matrix:\n  model:\n    - { id: plain, provider: scripted }\n    - { id: sonnet, provider: scripted, priceAs: claude-sonnet-4-6 }\n  include:\n    - { model: plain, budget: { maxCostUsd: 1 } }\n",
    "tokens.yaml": "matrix:\n  model:\n    - { id: plain, provider: scripted }\n  include:\n    - { budget: { maxTokens: 100000 } }\n",
  });
  for (const command of ["validate", "run"]) {
    const got = await runCli([command, "suite", "--matrix", "matrix.yaml", ...(command === "run" ? ["--out", "run", "--sandbox", "off"] : [])], { cwd: root });
    assert.equal(got.code, 2, `${command}: ${got.stdout}${got.stderr}`);
    assert.match(got.stderr, /cannot enforce the budget\.maxCostUsd \$1\.00 of matrix cell model=plain \(task suite\/a@model=plain, .*a\.yaml\) on unpriced model scripted/);
  }
  await assert.rejects(readdir(join(root, "run", "tasks")), "nothing ran");
  // A token budget needs no price; validate shows each cell's budget, and the manifest keeps it.
  const validated = await runCli(["validate", "suite", "--matrix", "tokens.yaml"], { cwd: root });
  assert.equal(validated.code, 0, validated.stderr);
  assert.match(validated.stdout, /  cell model=plain \(budget 100000 tokens\)\n/);
  const tokens = await runCli(["run", "suite", "--matrix", "tokens.yaml", "--out", "run-tokens", "--sandbox", "off"], { cwd: root });
  assert.equal(tokens.code, 0, tokens.stderr);
  const manifest = await readJson<{ cells: { variant: string; budget?: unknown }[] }>(join(root, "run-tokens", "manifest.json"));
  assert.deepEqual(manifest.cells.map((c) => [c.variant, c.budget]), [["model=plain", { maxTokens: 100000 }]]);
});

test("a SIGKILL mid-matrix (2 cells × 2 repeats) resumes each unfinished trial once and keeps each finished one", async (t) => {
  const root = await tempDir(t);
  const steps = 3;
  // Each step appends its tag to the trial's own tags.txt, then sleeps: the check wants every tag exactly once, and the cell's variable.
  const commands = Array.from({ length: steps }, (_, k) => `echo t-${k} >> tags.txt && sleep 0.3`);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/tagging.yaml": shellStepsTask(commands, {
      rest: `checks:\n  - { name: every tag once, run: "test $(sort -u tags.txt | wc -l) -eq ${steps} && test $(wc -l < tags.txt) -eq ${steps}" }\n` +
        "  - { name: the cell's variable, run: 'test -n \"$CELL\"' }\n",
    }),
    "matrix.yaml": "matrix:\n  env:\n    - { id: a, vars: { CELL: a } }\n    - { id: b, vars: { CELL: b } }\n",
  });
  const out = join(root, "run");
  const args = ["run", "suite", "--out", out, "--matrix", "matrix.yaml", "--repeats", "2", "--concurrency", "2", "--sandbox", "off"];
  const first = startCli(args, { cwd: root });
  // Killed once a trial has finished and others are under way.
  await waitFor(async () => (await readRunResults(out).catch(() => [])).length >= 1);
  first.child.kill("SIGKILL");
  await first.done;
  const before = await readRunResults(out);
  assert.ok(before.length >= 1 && before.length < 4, `killed mid-run: ${before.length} of 4 trials finished`);
  const folder = (variant: string, repeat: number) => join(out, "tasks", "suite", "tagging", variant, String(repeat));
  const keptBytes = new Map<string, string>();
  for (const r of before) keptBytes.set(`${r.trial!.variant}#${r.trial!.repeat}`, await readFile(join(folder(r.trial!.variant!, r.trial!.repeat), "result.json"), "utf8"));

  const second = await runCli([...args, "--json"], { cwd: root });
  assert.equal(second.code, 0, second.stderr);
  const results = await readRunResults(out);
  assert.deepEqual(results.map((r) => [r.trial?.variant, r.trial?.repeat, r.status]),
    [["env=a", 1, "passed"], ["env=a", 2, "passed"], ["env=b", 1, "passed"], ["env=b", 2, "passed"]]);
  for (const variant of ["env=a", "env=b"]) {
    for (const repeat of [1, 2]) {
      assert.deepEqual((await readFile(join(folder(variant, repeat), "workspace", "tags.txt"), "utf8")).split("\n").filter(Boolean),
        ["t-0", "t-1", "t-2"], `${variant}#${repeat}: each step ran once, in its own workspace`);
    }
  }
  for (const [trial, bytes] of keptBytes) {
    const [variant, repeat] = trial.split("#");
    assert.equal(await readFile(join(folder(variant!, Number(repeat)), "result.json"), "utf8"), bytes, `${trial} kept as it was`);
  }
  const ends = second.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { type: string; kept?: boolean; trial?: string })
    .filter((p) => p.type === "task_end");
  assert.deepEqual(ends.filter((p) => p.kept === true).map((p) => p.trial).sort(),
    before.map((r) => `suite/tagging@${r.trial!.variant}#${r.trial!.repeat}`).sort(), "the trials finished before the kill are kept, not run again");
  assert.equal(ends.length, 4);
});

test("validate and run agree on hostile matrices (exit 2 both, naming the problem); a pin keeps the task's model", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "suite/scripted.yaml": "prompt: Say ok.\nmodel: { provider: scripted, script: [{ say: ok }] }\n",
    "pinned/scripted.yaml": "prompt: Say ok.\npin: [model]\nmodel: { provider: scripted, script: [{ say: ok }] }\n",
    "remote.yaml": "matrix:\n  model:\n    - { id: sonnet, provider: anthropic, name: claude-sonnet-4-6 }\n",
    "unknown-value.yaml": "matrix:\n  model:\n    - { id: a, provider: scripted }\n  exclude:\n    - { model: b }\n",
    "secret.yaml": "matrix:\n  env:\n    - { id: a, vars: { API_TOKEN: abcdefghijkl } }\n",
    "bad-id.yaml": "matrix:\n  sandbox:\n    - { id: 'a@b', mode: off }\n",
    "typo.yaml": "matrix:\n  modle:\n    - { id: a, provider: scripted }\n",
    "empty.yaml": "matrix: {}\n",
  });
  const env = { ANTHROPIC_API_KEY: "sk-test" };
  const hostile: [string, RegExp][] = [
    ["remote.yaml", /remote model, and this task is scripted/],
    ["unknown-value.yaml", /unknown-value\.yaml:5:\d+: matrix\.exclude\.0\.model: model has no value "b"/],
    ["secret.yaml", /API_TOKEN looks like a secret/],
    ["bad-id.yaml", /matrix\.sandbox\.0\.id: an id uses letters/],
    ["typo.yaml", /unknown key `modle`; did you mean `model`\?/],
    ["empty.yaml", /the matrix has no cell/],
  ];
  for (const [file, message] of hostile) {
    const validated = await runCli(["validate", "suite", "--matrix", file], { cwd: root, env });
    const ran = await runCli(["run", "suite", "--matrix", file, "--out", join(root, `run-${file}`), "--sandbox", "off"], { cwd: root, env });
    assert.equal(validated.code, 2, `validate ${file}: ${validated.stdout}${validated.stderr}`);
    assert.equal(ran.code, 2, `run ${file}: ${ran.stdout}${ran.stderr}`);
    assert.match(validated.stderr, message, file);
    assert.match(ran.stderr, message, file);
  }
  // A task outside the matrix file's folder is not in its scope.
  await mkdir(join(root, "sub"));
  await writeFile(join(root, "sub", "m.yaml"), "matrix:\n  sandbox:\n    - { id: off, mode: off }\n");
  const outside = await runCli(["validate", "suite", "--matrix", "sub/m.yaml"], { cwd: root });
  assert.equal(outside.code, 2);
  assert.match(outside.stderr, /outside the matrix's folder/);
  // pin: [model] keeps the script: validate lists the pin, and the run plays the script.
  const pinned = await runCli(["validate", "pinned", "--matrix", "remote.yaml"], { cwd: root, env });
  assert.equal(pinned.code, 0, pinned.stderr);
  assert.match(pinned.stdout, /pinned: pinned\/scripted keeps its own model/);
  // Discovery: a matrix file among the paths is not a task (and validate checks it as a matrix).
  const discovered = await runCli(["validate", "."], { cwd: root, env });
  assert.equal(discovered.code, 2);
  assert.doesNotMatch(discovered.stderr, /prompt/);
});

test("--matrix path inputs: blank, a folder, a missing file or parent, a FIFO are exit 2; a symlink and a name with spaces and unicode work", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "suite/ok.yaml": "prompt: Say ok.\nmodel: { provider: scripted, script: [{ say: ok }] }\n",
    "mätrix file.yaml": "matrix:\n  sandbox:\n    - { id: off, mode: off }\n",
  });
  await symlink(join(root, "mätrix file.yaml"), join(root, "link.yaml"));
  execFileSync("mkfifo", [join(root, "fifo.yaml")]);
  const cases: [string, RegExp][] = [
    ["", /--matrix to name a path, got "" \(it is empty/],
    [" ", /--matrix to name a path/],
    [".", /cannot read the matrix file/],
    ["missing.yaml", /cannot read the matrix file/],
    ["no/such/parent.yaml", /cannot read the matrix file/],
    ["fifo.yaml", /cannot read the matrix file/],
  ];
  for (const [path, message] of cases) {
    for (const command of ["validate", "run"]) {
      const got = await runCli([command, "suite", "--matrix", path, ...(command === "run" ? ["--out", join(root, "run")] : [])], { cwd: root });
      assert.equal(got.code, 2, `${command} --matrix ${JSON.stringify(path)}: ${got.stderr}`);
      assert.match(got.stderr, message, `${command} --matrix ${JSON.stringify(path)}`);
    }
  }
  for (const path of ["mätrix file.yaml", "link.yaml"]) {
    const got = await runCli(["run", "suite", "--matrix", path, "--out", join(root, `run-${path}`)], { cwd: root });
    assert.equal(got.code, 0, got.stderr);
    await readJson(join(root, `run-${path}`, "tasks", "suite", "ok", "sandbox=off", "1", "result.json"));
  }
});
