/**
 * The action under GitHub's own local runner for JavaScript actions, `@github/local-action` 7.0.1:
 * it loads the un-bundled source entries (src/action/main-entry.ts, post-entry.ts: each exports
 * `run()`) through tsx, stubs `@actions/core` (outputs kept and printed as a table, annotations and
 * groups as workflow commands, the summary appended to GITHUB_STEP_SUMMARY) and `@actions/cache`
 * (a folder, LOCAL_ACTION_CACHE_PATH), reads the inputs from an env file, and keeps no state from
 * one invocation to the next: a post step run alone derives the run directory and cache key from
 * the inputs. local-action is found where scripts/install-local-action.sh put it
 * (RHEMA_LOCAL_ACTION_BIN); absent, the test skips saying why, unless CI_REQUIRE_LOCAL_ACTION=1
 * (.ci/run), where it fails.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, lstatSync } from "node:fs";
import { cp, mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "../support/paths.js";
import { tempDir } from "../support/temp-dir.js";
import { writeFiles } from "../support/suite-files.js";
import { taskGroups, workflowCommands } from "./action-harness.js";

const BIN = process.env.RHEMA_LOCAL_ACTION_BIN;

/** false when local-action is installed; else why the test skips (or, required, an error). */
function localActionSkip(): false | string {
  if (BIN && existsSync(BIN)) return false;
  const why = BIN ? `RHEMA_LOCAL_ACTION_BIN=${BIN} does not exist` : "RHEMA_LOCAL_ACTION_BIN is not set";
  if (process.env.CI_REQUIRE_LOCAL_ACTION === "1") throw new Error(`@github/local-action is required here (CI_REQUIRE_LOCAL_ACTION=1) but ${why}; .ci/run installs it with scripts/install-local-action.sh`);
  return `@github/local-action is absent (${why}): set it to the path scripts/install-local-action.sh prints`;
}

interface LocalRun {
  code: number | null;
  stdout: string;
  /** The "Action Outputs" table local-action prints at the end. */
  outputs: Record<string, string>;
}

/** `local-action run <repo> <entry> <env file> [--post <entry>]`, from the repository (its npm and tsx). */
function localAction(entry: string, envFile: string, post?: string): Promise<LocalRun> {
  const args = [BIN!, "run", repoRoot, entry, envFile, ...(post ? ["--post", post] : [])];
  // local-action stubs @actions/core by the path `npm ls` gives; Node loads modules by their real
  // path. Where node_modules is a link (a worktree, the standalone clone) the two differ unless
  // symlinks are kept as they are.
  const preserve = lstatSync(join(repoRoot, "node_modules")).isSymbolicLink() ? { NODE_OPTIONS: "--preserve-symlinks" } : {};
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", NO_COLOR: "1", ...preserve };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stdout += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, outputs: outputTable(stdout) }));
  });
}

function outputTable(stdout: string): Record<string, string> {
  const table = stdout.slice(stdout.lastIndexOf("Action Outputs"));
  const rows = [...table.matchAll(/^│\s*\d+\s*│\s*'([^']+)'\s*│\s*'([^']*)'\s*│$/gm)];
  return Object.fromEntries(rows.map((m) => [m[1]!, m[2]!]));
}

async function envFile(path: string, vars: Record<string, string>): Promise<string> {
  await writeFile(path, Object.entries(vars).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join("\n") + "\n");
  return path;
}

test("the source entries under @github/local-action: outputs, the job summary, annotations and groups; a post step alone saves the run directory under the key the inputs give", { skip: localActionSkip() }, async (t) => {
  const root = await tempDir(t, "rhema-local-action-");
  const workspace = join(root, "workspace");
  const cacheDir = join(root, "cache");
  await mkdir(cacheDir, { recursive: true });
  await cp(join(repoRoot, "tasks"), join(workspace, "tasks"), { recursive: true });
  const summaryFile = join(root, "summary.md");
  const github = {
    GITHUB_WORKSPACE: workspace, GITHUB_STEP_SUMMARY: summaryFile, GITHUB_WORKFLOW: "nightly", GITHUB_JOB: "suite", GITHUB_RUN_ID: "4242",
    LOCAL_ACTION_CACHE_PATH: cacheDir, LOCAL_ACTION_WORKSPACE: workspace,
  };
  const inputs = { INPUT_TASKS: "tasks/arithmetic", INPUT_FILTER: "arithmetic/fix-add,arithmetic/wrong-fix" };

  // Main and post in one invocation.
  const first = await localAction("src/action/main-entry.ts", await envFile(join(root, "attempt-1.env"), { ...github, ...inputs, GITHUB_RUN_ATTEMPT: "1" }), "src/action/post-entry.ts");
  assert.equal(first.code, 0, first.stdout);
  const runDir = join(workspace, ".rhema/runs/latest");
  const { ["cache-hit-rate"]: hitRate, ["cache-read-tokens"]: cacheRead, ["cache-write-tokens"]: _w, ["output-tokens"]: _o, ["reasoning-tokens"]: _r, ["input-tokens"]: _i, ...outputs } = first.outputs;
  assert.deepEqual(outputs, {
    junit: join(runDir, "junit.xml"), stats: join(runDir, "stats.json"), summary: join(runDir, "summary.md"), "run-dir": runDir,
    passed: "1", failed: "1", errored: "0", stopped: "0", interrupted: "0", "cost-usd": "unpriced",
    trials: "2", flaky: "0", "pass-rate": "0.5000", regressed: "0", improved: "0",
    // No artifact service under local-action: nothing uploaded (a warning says so).
    "report-url": "",
    // No task has `output:`: no structured answer, no answers file.
    answer: "", "answers-file": "",
    // One changes.patch a trial, a line each (local-action's table shows the newline escaped).
    changes: ["fix-add", "wrong-fix"].map((id) => join(runDir, "tasks/arithmetic", id, "default/1/changes.patch")).join("\\n"),
  }, first.stdout);
  assert.match(hitRate!, /^0\.\d{4}$/);
  assert.ok(Number(cacheRead) > 0);
  assert.ok((await readFile(summaryFile, "utf8")).includes(await readFile(join(runDir, "summary.md"), "utf8")), "the job summary holds the run's summary.md");
  const errors = workflowCommands(first.stdout, "error");
  assert.match(errors[0]!, /^::error title=arithmetic\/wrong-fix,file=tasks\/arithmetic\/wrong-fix\.yaml::check "unit tests" failed \(exit code 1\)/);
  assert.deepEqual(errors.slice(1), ["::error::rhema: 1 task did not pass: arithmetic/wrong-fix"]);
  assert.deepEqual(taskGroups(first.stdout).map((g) => g.title).sort(), ["✔ arithmetic/fix-add: passed", "✖ arithmetic/wrong-fix: failed"]);
  assert.ok(first.stdout.includes("Running Post Step"));
  const saved = async () => (await readdir(cacheDir)).filter((n) => n.endsWith(".cache")).map((n) => n.replace(/-[0-9a-f]{64}\.cache$/, "")).sort();
  assert.deepEqual(await saved(), ["rhema-nightly-suite-all-.rhema_runs_latest-4242-1"]);

  // The post step alone, in an invocation of its own (no state): the run directory and key come from the inputs.
  const post = await localAction("src/action/post-entry.ts", await envFile(join(root, "attempt-2.env"), { ...github, ...inputs, GITHUB_RUN_ATTEMPT: "2" }));
  assert.equal(post.code, 0, post.stdout);
  assert.match(post.stdout, /rhema: saved .*\.rhema\/runs\/latest to the actions cache as rhema-nightly-suite-all-\.rhema_runs_latest-4242-2/);
  assert.deepEqual(await saved(), ["rhema-nightly-suite-all-.rhema_runs_latest-4242-1", "rhema-nightly-suite-all-.rhema_runs_latest-4242-2"]);

  // A bad task file: an annotation on its file, line and column, and the job summary says what was wrong.
  await writeFiles(workspace, { "bad/typo.yaml": "prompt: Say done.\nmodel: { provider: scripted, script: [{ say: done }] }\nlimits: { timout: 3 }\n" });
  await writeFile(summaryFile, "");
  const bad = await localAction("src/action/main-entry.ts", await envFile(join(root, "bad.env"), { ...github, INPUT_TASKS: "bad", INPUT_RESUME: "false", GITHUB_RUN_ATTEMPT: "3" }));
  assert.equal(bad.code, 0, bad.stdout);
  const [badError] = workflowCommands(bad.stdout, "error");
  assert.match(badError!, /^::error title=invalid task file,file=bad\/typo\.yaml,line=3,(endLine=3,)?col=11(,endColumn=11)?::limits\.timout: unknown key; did you mean `timeout`\?/);
  assert.match(await readFile(summaryFile, "utf8"), /^## rhema: the run did not start\n[\s\S]*^- `bad\/typo\.yaml:3:11` \(task file\): limits\.timout: unknown key/m);
});
