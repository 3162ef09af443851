/** The library's exports: a policy decides and a suite loads through them, and every export is documented. (The engine's turn runs through the package in docs/library.md's example, run by test/docs.) */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as rhema from "../src/index.js";
import { repoRoot } from "./support/paths.js";
import { tempDir } from "./support/temp-dir.js";

test("a library user loads a policy and its decisions come back through the exports", async (t) => {
  const workspace = await tempDir(t);
  const { policy } = await rhema.loadPolicy("preset:read-only");
  const approval = new rhema.PolicyApproval(policy);
  const ask = (tool: string, effect: "read" | "write" | "exec", paths: string[], command?: string) =>
    approval.decide({ callId: "c", tool, effect, input: {}, workspace, paths, ...(command ? { command } : {}) }, new AbortController().signal);
  assert.equal((await ask("read_file", "read", ["src/a.js"])).decision, "allow");
  assert.equal((await ask("write_file", "write", ["src/a.js"])).decision, "deny");
  assert.equal((await ask("shell", "exec", [], "rm -rf /")).decision, "deny");
  assert.equal(approval.denials.length, 2);
});

test("a library user loads a suite through the exports: tasks by suite and id, the rest reported", async (t) => {
  const root = await tempDir(t);
  await mkdir(join(root, "suite"));
  await writeFile(join(root, "suite", "b.yaml"), "prompt: Say hi.\nmodel: { provider: scripted, script: [{ say: hi }] }\n");
  await writeFile(join(root, "suite", "a.yaml"), "prompt: Say ho.\ntags: [nightly]\nmodel: { provider: scripted, script: [{ say: ho }] }\n");
  const all = await rhema.loadTasks(["suite"], { cwd: root });
  assert.deepEqual(all.tasks.map((task) => `${task.suite}/${task.id}`), ["suite/a", "suite/b"]);
  const nightly = await rhema.loadTasks(["suite"], { cwd: root, tags: ["nightly"] });
  assert.deepEqual(nightly.tasks.map((task) => task.id), ["a"]);
  assert.deepEqual(nightly.skipped.map((task) => task.id), ["b"]);
  await assert.rejects(rhema.loadTasks(["suite/missing.yaml"], { cwd: root }), rhema.RhemaError);
});

test("every export statement of src/index.ts has a doc comment just above it", () => {
  const lines = readFileSync(join(repoRoot, "src/index.ts"), "utf8").split("\n");
  const undocumented = lines.flatMap((line, i) => (line.startsWith("export ") && !/^\/\*\*.*\*\/$/.test(lines[i - 1] ?? "") ? [line] : []));
  assert.deepEqual(undocumented, []);
});
