/**
 * The action's shape: the committed bundle equals a fresh build, `action.yml` passes a real
 * validator (@action-validator/cli), every input it declares is read by the code and changes
 * what the action does (no dead inputs), and its inputs map one to one onto `rhema run`'s flags
 * (as the built CLI's help lists them) but for a written list of exclusions.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";
import { ACTION_INPUT_NAMES, readActionInputs, type ActionInputName } from "../../src/action/action-inputs.js";
import { ACTION_ONLY_INPUTS, RUN_FLAGS_WITHOUT_INPUT, inputForFlag, nameInputs } from "../../src/action/input-names.js";
import { CLI } from "../support/cli.js";
import { repoRoot } from "../support/paths.js";
import { tempDir } from "../support/temp-dir.js";

const actionYml = join(repoRoot, "action.yml");

test("the committed bundle is what scripts/build-action.mjs builds from the sources", async (t) => {
  const fresh = await tempDir(t, "rhema-bundle-");
  execFileSync(process.execPath, [join(repoRoot, "scripts/build-action.mjs"), "--outdir", fresh], { cwd: repoRoot, stdio: "pipe" });
  const committed = join(repoRoot, "action-dist");
  assert.deepEqual((await readdir(committed)).sort(), (await readdir(fresh)).sort());
  for (const name of await readdir(fresh)) {
    const same = (await readFile(join(committed, name))).equals(await readFile(join(fresh, name)));
    assert.ok(same, `action-dist/${name} differs from a fresh build: run \`npm run build:action\` and commit action-dist/`);
  }
});

test("action.yml passes @action-validator/cli and runs on node24", async (t) => {
  const text = await readFile(actionYml, "utf8");
  const meta = parse(text) as { runs: Record<string, string> };
  assert.deepEqual(meta.runs, { using: "node24", main: "action-dist/index.js", post: "action-dist/index.js", "post-if": "always()" });
  // The validator's schema (0.6.0, its latest) predates node24 and lists node12/16/20 only;
  // everything else in the file is checked as is.
  const dir = await tempDir(t, "rhema-validate-");
  const validate = async (content: string) => {
    await writeFile(join(dir, "action.yml"), content);
    return spawnSync(process.execPath, [join(repoRoot, "node_modules/@action-validator/cli/cli.mjs"), join(dir, "action.yml")], { encoding: "utf8" });
  };
  const asNode20 = text.replace(/^  using: node24$/m, "  using: node20");
  assert.notEqual(asNode20, text);
  const ok = await validate(asNode20);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  const broken = await validate(asNode20.replace("outputs:\n", "outputs:\n  junit-bad: 3\n"));
  assert.notEqual(broken.status, 0, "the validator rejects a malformed output");
});

/** A value for each input that differs from its default. */
const SAMPLE: Record<ActionInputName, string> = {
  tasks: "tasks/more", policy: "preset:ci", provider: "anthropic", model: "claude-sonnet-4-5", "base-url": "http://127.0.0.1:9",
  concurrency: "2", filter: "a/*", tag: "nightly", shard: "1/4", out: ".rhema/runs/other", "max-steps": "7", timeout: "5m", "stream-idle": "30s", "max-cost": "20", pricing: "pricing.yaml",
  sandbox: "off", "workspace-layers": "copy", "fail-on": "never", resume: "false", comment: "true", "github-token": "ghs_example",
  "max-tokens": "50000", "stopped-ok": "true", "allow-env": "NPM_TOKEN\nGH_TOKEN", "retry-errored": "true", "report-skipped": "true", "restart-changed": "true",
  repeats: "5", "min-pass-rate": "0.8", gate: "lower", "stop-early": "true", "pass-at": "1,3", "junit-cases": "trial", matrix: "matrix.yaml", calibration: "calibration.json",
  quarantine: ".github/quarantine.yaml", cassette: "cassettes", "cassette-mode": "hybrid", "cassette-usage": "simulate", baseline: "rhema-baseline-nightly-main", "save-baseline": "true", "compare-fail-on": "never", "comment-diffstat": "true",
  "upload-report": "false", "retention-days": "7",
};

test("every input action.yml declares is read, and each one changes the action's settings", async () => {
  const meta = parse(await readFile(actionYml, "utf8")) as { inputs: Record<string, { default?: string }> };
  assert.deepEqual(Object.keys(meta.inputs).sort(), [...ACTION_INPUT_NAMES].sort());
  const defaults = (name: ActionInputName) => (name === "tasks" ? "tasks" : name === "github-token" ? "" : meta.inputs[name]?.default ?? "");
  const asked = new Set<string>();
  const base = readActionInputs((name) => (asked.add(name), defaults(name)));
  assert.deepEqual([...asked].sort(), [...ACTION_INPUT_NAMES].sort());
  for (const name of ACTION_INPUT_NAMES) {
    const changed = readActionInputs((n) => (n === name ? SAMPLE[name] : defaults(n)));
    assert.notDeepEqual(changed, base, `input "${name}" changes nothing`);
  }
});

/** `rhema run`'s flags and their defaults, as the built CLI's `--help` lists them (help and version left out). */
function runFlags(): Map<string, string | undefined> {
  const help = spawnSync(process.execPath, [CLI, "run", "--help"], { encoding: "utf8" });
  assert.equal(help.status, 0, help.stderr);
  const options = help.stdout.slice(help.stdout.indexOf("\nOptions:\n"), help.stdout.indexOf("\nExamples:"));
  const flags = new Map<string, string | undefined>();
  // A flag's entry runs from its name to the next one; yargs wraps the description and puts [default: …] at its end.
  const entries = options.split(/\n(?=\s+(?:-\w, )?--[a-z])/);
  for (const entry of entries) {
    const name = /^\s+(?:-\w, )?--([a-z][a-z0-9-]*)/.exec(entry)?.[1];
    if (name === undefined || name === "help" || name === "version") continue;
    flags.set(name, /\[default: (\[\]|[^\]]*)\]/.exec(entry)?.[1]);
  }
  return flags;
}

test("every run flag is an input of the same name (tasks are the paths) but for the written exclusions, and no input is left without its flag", async () => {
  const meta = parse(await readFile(actionYml, "utf8")) as { inputs: Record<string, { default?: string; description: string }> };
  const flags = runFlags();
  assert.ok(flags.size >= 25 && flags.has("max-tokens") && flags.has("sandbox"), `parsed the help: ${[...flags.keys()].join(" ")}`);
  const missing = [...flags.keys()].filter((flag) => RUN_FLAGS_WITHOUT_INPUT[flag] === undefined && meta.inputs[flag] === undefined);
  assert.deepEqual(missing, [], "a run flag needs an action input of its name (action.yml, action-inputs.ts), or a line in RUN_FLAGS_WITHOUT_INPUT saying why not");
  const stale = Object.keys(RUN_FLAGS_WITHOUT_INPUT).filter((flag) => !flags.has(flag) || meta.inputs[flag] !== undefined);
  assert.deepEqual(stale, [], "an exclusion names a run flag that has no input");
  const orphans = Object.keys(meta.inputs).filter((name) => !flags.has(name) && !ACTION_ONLY_INPUTS.includes(name as ActionInputName));
  assert.deepEqual(orphans, [], "an input that is not a run flag belongs in ACTION_ONLY_INPUTS");
  for (const name of Object.keys(meta.inputs)) {
    if (!flags.has(name)) continue;
    assert.equal(inputForFlag(name), name);
    assert.ok(meta.inputs[name]!.description.includes(`\`--${name}\``), `input "${name}" names its flag \`--${name}\` in its description`);
    // A flag's default is the input's (yargs prints a boolean's as false, a string's quoted); no default stays none.
    const flagDefault = flags.get(name)?.replace(/^"(.*)"$/, "$1");
    if (flagDefault !== undefined && flagDefault !== "[]") assert.equal(meta.inputs[name]!.default, flagDefault, `input "${name}" defaults as --${name} does`);
    else assert.equal(meta.inputs[name]!.default, undefined, `input "${name}" has no default, as --${name} has none`);
  }
});

test("messages written for the CLI name the action's inputs instead of the run flags", () => {
  assert.equal(nameInputs("Expected --shard as i/n, got \"3/2\""), "Expected the `shard` input as i/n, got \"3/2\"");
  assert.equal(nameInputs("wait for it, or pass another --out"), "wait for it, or pass another `out` input");
  assert.equal(nameInputs("2 task(s) name no policy and no --policy was given"), "2 task(s) name no policy and no `policy` input was given");
  assert.equal(nameInputs("add it to a pricing file (--pricing)"), "add it to a pricing file (the `pricing` input)");
  assert.equal(nameInputs("run them afresh with --restart-changed, or pass another --out"), "run them afresh with the `restart-changed` input, or pass another `out` input");
  // Not a run flag with an input: left as written.
  assert.equal(nameInputs("cp --sparse=always; start over with --restart; --junit x; a--policy"), "cp --sparse=always; start over with --restart; --junit x; a--policy");
});

test("bad input values are named", () => {
  const read = (over: Partial<Record<ActionInputName, string>>) => () => readActionInputs((n) => over[n] ?? (n === "tasks" ? "tasks" : undefined));
  assert.throws(read({ tasks: " \n " }), { message: 'input "tasks": name at least one task file, folder or glob' });
  assert.throws(read({ "max-steps": "2.5" }), { message: 'input "max-steps": Expected a whole number from 1 and up, got "2.5"' });
  assert.throws(read({ "max-cost": "0" }), { message: 'input "max-cost": Expected a number of dollars above 0 (such as 20 or 0.5), got "0"' });
  assert.deepEqual(readActionInputs((n) => (n === "tasks" ? "t" : n === "max-cost" ? "$2.5" : undefined)).request.maxCost, 2.5);
  assert.throws(read({ timeout: "soon" }), { message: 'input "timeout": Expected a duration like 90s, 10m or 1h, a number of seconds, or none, got "soon"' });
  assert.throws(read({ "stream-idle": "0s" }), { message: 'input "stream-idle": Expected a duration like 90s, 10m or 1h, a number of seconds, or none, got "0s"' });
  for (const name of ["timeout", "stream-idle"] as const) {
    assert.equal(readActionInputs((n) => (n === "tasks" ? "t" : n === name ? "none" : undefined)).request[name === "timeout" ? "timeout" : "streamIdle"], "none", `${name}: none is no limit`);
    // A bare number is seconds, as in a task file's limits.
    assert.equal(readActionInputs((n) => (n === "tasks" ? "t" : n === name ? "2" : undefined)).request[name === "timeout" ? "timeout" : "streamIdle"], "2", `${name}: 2 is 2 seconds`);
    assert.throws(read({ [name]: "0" }), { message: `input "${name}": Expected a duration like 90s, 10m or 1h, a number of seconds, or none, got "0"` });
  }
  assert.throws(read({ "fail-on": "sometimes" }), { message: 'input "fail-on": Expected one of failure, error, never, got "sometimes"' });
  assert.throws(read({ resume: "yes" }), { message: 'input "resume": Expected true or false, got "yes"' });
  assert.throws(read({ "stopped-ok": "1" }), { message: 'input "stopped-ok": Expected true or false, got "1"' });
  assert.throws(read({ "max-tokens": "1e6" }), { message: 'input "max-tokens": Expected a whole number from 1 and up, got "1e6"' });
  assert.deepEqual(readActionInputs((n) => (n === "tasks" ? "t" : n === "allow-env" ? "NPM_TOKEN, GH_TOKEN\nX" : undefined)).request.allowEnv, ["NPM_TOKEN", "GH_TOKEN", "X"]);
  // An input with a default set to "" (an unset variable) names nothing; left out, it takes its default.
  assert.throws(read({ out: "" }), { message: /^input "out": Expected a path, got ""/ });
  assert.throws(read({ out: "  " }), { message: /^input "out": Expected a path, got "  "/ });
  assert.equal(readActionInputs((n) => (n === "tasks" ? "t" : undefined)).request.out, ".rhema/runs/latest");
  assert.deepEqual(readActionInputs((n) => (n === "tasks" ? "a.yaml, b\n c/**\n" : n === "tag" ? "x\ny" : undefined)).request.paths, ["a.yaml", "b", "c/**"]);
});

test("the README's example workflows pass the validator and give the action only inputs it declares", async (t) => {
  const readme = await readFile(join(repoRoot, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## The GitHub Action"), readme.indexOf("## The library"));
  const workflows = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
  assert.equal(workflows.length, 6);
  const dir = join(await tempDir(t, "rhema-workflows-"), ".github", "workflows");
  await mkdir(dir, { recursive: true });
  const declared = Object.keys((parse(await readFile(actionYml, "utf8")) as { inputs: Record<string, unknown> }).inputs);
  for (const [i, text] of workflows.entries()) {
    const file = join(dir, `example-${i}.yml`);
    await writeFile(file, text);
    const run = spawnSync(process.execPath, [join(repoRoot, "node_modules/@action-validator/cli/cli.mjs"), file], { encoding: "utf8" });
    assert.equal(run.status, 0, `example ${i}: ${run.stdout}${run.stderr}`);
    const jobs = Object.values((parse(text) as { jobs: Record<string, { steps: Array<{ uses?: string; with?: Record<string, unknown> }> }> }).jobs);
    for (const step of jobs.flatMap((j) => j.steps)) {
      if (!step.uses?.startsWith("OWNER/rhema@")) continue;
      for (const name of Object.keys(step.with ?? {})) assert.ok(declared.includes(name), `example ${i} passes an undeclared input "${name}"`);
    }
  }
});

test("quarantine: a path to the quarantine file, as --quarantine takes it; unset or empty is none", () => {
  const request = (value: string | undefined) => readActionInputs((n) => (n === "tasks" ? "t" : n === "quarantine" ? value : undefined)).request;
  assert.equal(request(" .github/quarantine ü.yaml ").quarantine, ".github/quarantine ü.yaml");
  assert.equal("quarantine" in request(""), false);
  assert.equal("quarantine" in request(undefined), false);
});
