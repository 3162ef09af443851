import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { RhemaError } from "../../../src/core/errors.js";
import { loadTasks, parseShard, taskStillDefined, type LoadedTasks } from "../../../src/runner/tasks/suite-loader.js";
import { TaskFileError } from "../../../src/runner/tasks/task-file.js";
import { taskKey } from "../../../src/runner/tasks/task-key.js";
import { tempDir } from "../../support/temp-dir.js";

async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), content);
  }
}

/** Twelve tasks in three suites; tags alternate. */
async function makeSuites(t: Parameters<typeof tempDir>[0]): Promise<string> {
  const root = await tempDir(t);
  const files: Record<string, string> = {};
  for (const suite of ["alpha", "beta", "gamma"]) {
    for (let n = 1; n <= 4; n++) {
      files[`suites/${suite}/t${n}.yaml`] = `prompt: task ${n}\ntags: [${n % 2 === 0 ? "even" : "odd"}${n === 4 ? ", nightly" : ""}]\n`;
    }
  }
  await writeFiles(root, files);
  return root;
}

const keys = (loaded: LoadedTasks): string[] => loaded.tasks.map(taskKey);

async function usageErrorOf(promise: Promise<unknown>): Promise<RhemaError> {
  const err = await promise.then(() => null, (e: unknown) => e);
  assert.ok(err instanceof RhemaError && err.code === "usage", `expected a usage error, got ${String(err)}`);
  return err;
}

describe("suite loading: finding task files", () => {
  test("a folder is walked recursively; a task's workspace folder and policy files are skipped by role, not by name", async (t) => {
    const root = await tempDir(t);
    await writeFiles(root, {
      "suites/web/build.yaml": "prompt: build it\nworkspace: { from: ../common/site }\npolicy: ../rules/ci.yml\n",
      "suites/common/site/config.yaml": "name: a fixture's own YAML\n",
      "suites/rules/ci.yml": "version: 1\ndefault: deny\nrules: []\n",
    });
    const loaded = await loadTasks(["suites"], { cwd: root });
    assert.deepStrictEqual(keys(loaded), ["web/build"]);
    assert.deepStrictEqual(loaded.policies, [join(root, "suites/rules/ci.yml")]);
  });

  test("a repository a task clones as workspace.git is skipped too: its own YAML is no task", async (t) => {
    const root = await tempDir(t);
    await writeFiles(root, {
      "suites/web/fix.yaml": "prompt: fix it\nworkspace: { git: ../widget, ref: main }\n",
      "suites/widget/.git/HEAD": "ref: refs/heads/main\n",
      "suites/widget/.github/workflows/ci.yml": "on: push\n",
      "suites/widget/config.yaml": "name: the repository's own YAML\n",
    });
    const loaded = await loadTasks(["suites"], { cwd: root });
    assert.deepStrictEqual(keys(loaded), ["web/fix"]);
  });

  test("folders named fixtures or policies are not skipped by name: a YAML there that is no task must validate", async (t) => {
    const root = await tempDir(t);
    await writeFiles(root, {
      "suites/a/t1.yaml": "prompt: p\n",
      "suites/a/fixtures/ws/notes.yaml": "promt: a misspelled task\n",
    });
    const err = await loadTasks(["suites"], { cwd: root }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof TaskFileError, String(err));
    assert.match(err.message, /fixtures\/ws\/notes\.yaml:1:1: .*promt/);
  });

  test("hidden folders and node_modules are skipped too", async (t) => {
    const root = await makeSuites(t);
    await writeFiles(root, {
      "suites/.rhema/runs/latest/tasks/x.yaml": "not: a task\n",
      "suites/node_modules/pkg/config.yml": "not: a task\n",
    });
    assert.equal((await loadTasks(["suites"], { cwd: root })).tasks.length, 12);
  });

  test("files, folders and globs combine; a file named twice is loaded once", async (t) => {
    const root = await makeSuites(t);
    const loaded = await loadTasks(["suites/alpha/t1.yaml", "suites/alpha", "suites/beta/t{1,2}.yaml", "suites/*/t4.yaml"], { cwd: root });
    assert.deepStrictEqual(keys(loaded), [
      "alpha/t1", "alpha/t2", "alpha/t3", "alpha/t4", "beta/t1", "beta/t2", "beta/t4", "gamma/t4",
    ]);
  });

  test("a glob skips workspace folders and policy files by role like a folder walk", async (t) => {
    const root = await makeSuites(t);
    await writeFiles(root, {
      "suites/alpha/t1.yaml": "prompt: task 1\nworkspace: { from: ws }\n",
      "suites/alpha/ws/t9.yaml": "x: 1\n",
      "suites/policies/ci.yaml": "version: 1\ndefault: deny\n",
    });
    const loaded = await loadTasks(["suites/**/*.yaml"], { cwd: root });
    assert.equal(loaded.tasks.length, 12);
    assert.deepStrictEqual(loaded.policies, [join(root, "suites/policies/ci.yaml")]);
  });

  test("suite-level files are told by their top-level key and never loaded as tasks: a policy, a matrix, a quarantine list", async (t) => {
    const root = await tempDir(t);
    await writeFiles(root, {
      "s/t.yaml": "prompt: task\n",
      "s/policy.yaml": "version: 1\ndefault: deny\n",
      "s/matrix.yaml": "matrix:\n  limits:\n    - { id: short, maxSteps: 2 }\n",
      "s/quarantine.yaml": "version: 1\nquarantine:\n  - s/t\n",
    });
    const loaded = await loadTasks(["s"], { cwd: root });
    assert.deepStrictEqual(loaded.tasks.map(taskKey), ["s/t"]);
    assert.deepStrictEqual([loaded.policies, loaded.matrices, loaded.quarantines], [[join(root, "s/policy.yaml")], [join(root, "s/matrix.yaml")], [join(root, "s/quarantine.yaml")]]);
  });

  test("output is sorted by suite then id, not by file name", async (t) => {
    const root = await tempDir(t);
    await writeFiles(root, {
      "s/b/one.yaml": "prompt: p\n",
      "s/a/z.yaml": "id: a-first\nprompt: p\n",
      "s/a/a.yaml": "id: b-second\nprompt: p\n",
      "s/a/m.yaml": "suite: c\nprompt: p\n",
    });
    assert.deepStrictEqual(keys(await loadTasks(["s"], { cwd: root })), ["a/a-first", "a/b-second", "b/one", "c/m"]);
  });

  test("a path that does not exist is a usage error naming it", async (t) => {
    const root = await makeSuites(t);
    const err = await usageErrorOf(loadTasks(["suites/alpha", "suites/nope"], { cwd: root }));
    assert.match(err.message, /Task path not found: suites\/nope/);
  });

  test("a glob matching nothing and a folder without task files are usage errors", async (t) => {
    const root = await makeSuites(t);
    await mkdir(join(root, "empty"));
    assert.match((await usageErrorOf(loadTasks(["suites/*/none-*.yaml"], { cwd: root }))).message, /matched no task files/);
    assert.match((await usageErrorOf(loadTasks(["empty"], { cwd: root }))).message, /No task files .* under empty/);
    assert.match((await usageErrorOf(loadTasks([], { cwd: root }))).message, /at least one/);
  });
});

describe("suite loading: problems", () => {
  test("duplicate ids in a suite are a located error naming both files", async (t) => {
    const root = await tempDir(t);
    await writeFiles(root, { "s/math/add.yaml": "prompt: p\n", "s/math/plus.yaml": "# same id\nid: add\nprompt: p\n" });
    const err = await loadTasks(["s"], { cwd: root }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof TaskFileError);
    const first = join(root, "s/math/add.yaml");
    const second = join(root, "s/math/plus.yaml");
    assert.deepStrictEqual({ file: err.file, line: err.line, column: err.column, field: err.field }, { file: second, line: 2, column: 5, field: "id" });
    assert.equal(err.message, `${second}:2:5: id: duplicate task id "add" in suite "math": also used by ${first}:1:1`);
  });

  test("the same id in two suites is fine", async (t) => {
    const root = await tempDir(t);
    await writeFiles(root, { "s/a/x.yaml": "prompt: p\n", "s/b/x.yaml": "prompt: p\n" });
    assert.deepStrictEqual(keys(await loadTasks(["s"], { cwd: root })), ["a/x", "b/x"]);
  });

  test("problems of several files are reported together", async (t) => {
    const root = await makeSuites(t);
    await writeFiles(root, { "suites/alpha/bad1.yaml": "prompt: [\n", "suites/beta/bad2.yaml": "prompt: p\nextra: 1\n" });
    const err = await loadTasks(["suites"], { cwd: root }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof TaskFileError);
    assert.deepStrictEqual(err.problems.map((p) => [p.file, p.field]), [
      [join(root, "suites/alpha/bad1.yaml"), "yaml"],
      [join(root, "suites/beta/bad2.yaml"), "extra"],
    ]);
  });
});

describe("suite loading: selection", () => {
  test("--filter matches suite/id globs; the rest are skipped with the reason", async (t) => {
    const root = await makeSuites(t);
    const loaded = await loadTasks(["suites"], { cwd: root, filters: ["alpha/*", "*/t3"] });
    assert.deepStrictEqual(keys(loaded), ["alpha/t1", "alpha/t2", "alpha/t3", "alpha/t4", "beta/t3", "gamma/t3"]);
    assert.deepStrictEqual(loaded.skipped.map((s) => `${taskKey(s)}:${s.reason}`), [
      "beta/t1:filter", "beta/t2:filter", "beta/t4:filter", "gamma/t1:filter", "gamma/t2:filter", "gamma/t4:filter",
    ]);
    assert.equal(loaded.skipped[0]!.file, join(root, "suites/beta/t1.yaml"));
  });

  test("--tag keeps tasks with any of the tags, combined with --filter", async (t) => {
    const root = await makeSuites(t);
    const byTags = await loadTasks(["suites"], { cwd: root, tags: ["nightly", "odd"] });
    assert.deepStrictEqual(keys(byTags), ["alpha/t1", "alpha/t3", "alpha/t4", "beta/t1", "beta/t3", "beta/t4", "gamma/t1", "gamma/t3", "gamma/t4"]);
    assert.ok(byTags.skipped.every((s) => s.reason === "tag"));
    const both = await loadTasks(["suites"], { cwd: root, tags: ["even"], filters: ["gamma/*"] });
    assert.deepStrictEqual(keys(both), ["gamma/t2", "gamma/t4"]);
    assert.equal(both.skipped.length, 10);
  });

  test("--shard: every task in exactly one of 3 shards, balanced and stable across runs", async (t) => {
    const root = await makeSuites(t);
    const all = keys(await loadTasks(["suites"], { cwd: root }));
    const runShards = async () => Promise.all([1, 2, 3].map((index) => loadTasks(["suites"], { cwd: root, shard: { index, count: 3 } })));
    const first = await runShards();
    const seen = first.flatMap(keys);
    assert.deepStrictEqual([...seen].sort(), all);
    assert.equal(new Set(seen).size, all.length);
    assert.deepStrictEqual(first.map((s) => s.tasks.length), [4, 4, 4]);
    for (const shard of first) assert.deepStrictEqual([...keys(shard), ...shard.otherShards.map(taskKey)].sort(), all);
    const second = await runShards();
    assert.deepStrictEqual(second.map(keys), first.map(keys));
  });

  test("--shard splits skipped tasks too, so each is reported by one shard only", async (t) => {
    const root = await makeSuites(t);
    const shards = await Promise.all([1, 2, 3].map((index) => loadTasks(["suites"], { cwd: root, filters: ["alpha/*"], shard: { index, count: 3 } })));
    const skipped = shards.flatMap((s) => s.skipped.map(taskKey)).sort();
    assert.equal(skipped.length, 8);
    assert.equal(new Set(skipped).size, 8);
    assert.deepStrictEqual(shards.flatMap(keys).sort(), ["alpha/t1", "alpha/t2", "alpha/t3", "alpha/t4"]);
  });

  test("parseShard accepts i/n with 1 ≤ i ≤ n and says what it got otherwise", () => {
    assert.deepStrictEqual(parseShard("2/3"), { index: 2, count: 3 });
    assert.deepStrictEqual(parseShard(" 1 / 1 "), { index: 1, count: 1 });
    for (const bad of ["0/3", "4/3", "1/0", "a/b", "2", "-1/3", "1.5/3", ""]) {
      assert.throws(() => parseShard(bad), (err: unknown) => err instanceof RhemaError && err.code === "usage" && err.message.includes(`got "${bad}"`), bad);
    }
  });
});

test("taskStillDefined: a task whose file is gone or defines another id is no longer in the suite; one it cannot tell of stays", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "s/a.yaml": "prompt: a\n", "s/b.yaml": "id: other\nprompt: b\n", "s/broken.yaml": "prompt: [unclosed\n", "s/c.yaml": "prompt: c\n" });
  const at = (file: string, id: string) => ({ suite: "s", id, file: join(root, "s", file) });
  const found = [at("a.yaml", "a")];
  assert.equal(await taskStillDefined(at("a.yaml", "a"), found), true, "found this run");
  assert.equal(await taskStillDefined(at("a.yaml", "old-a"), found), false, "its file was loaded and defines another id");
  assert.equal(await taskStillDefined(at("gone.yaml", "gone"), found), false, "its file is gone");
  assert.equal(await taskStillDefined({ ...at("gone.yaml", "gone"), file: join(root, "s/a.yaml/x.yaml") }, []), false, "a path through a file");
  assert.equal(await taskStillDefined(at("c.yaml", "c"), found), true, "outside this run's paths, still defining it");
  assert.equal(await taskStillDefined(at("b.yaml", "b"), found), false, "outside this run's paths, defining another id now");
  assert.equal(await taskStillDefined(at("broken.yaml", "broken"), found), true, "cannot be loaded now (being edited): kept");
});
