/**
 * Bad input through the CLI: every malformed task file, policy and flag combination is exit 2
 * with a message naming what is wrong (file:line:column where there is a file), no stack
 * trace, and a run directory's earlier results left exactly as they were.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { cliEnv, runCli } from "../support/cli.js";
import { snapshotTree } from "../support/run-dir.js";
import { OPEN_POLICY, taggingTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

interface BadCase {
  name: string;
  /** Files written for this case under `bad/` (a suite folder), plus any elsewhere. */
  files?: Record<string, string>;
  args: string[];
  expect: RegExp;
  env?: Record<string, string>;
}

const task = (body: string) => `prompt: Do it.\npolicy: ../policy.yaml\nmodel: { provider: scripted, script: [{ say: ok }] }\n${body}`;

const cases: BadCase[] = [
  { name: "bad YAML indentation", files: { "bad/t.yaml": "prompt: x\n  model: y\n" }, args: ["run", "bad"], expect: /bad\/t\.yaml:1:9: yaml: Nested mappings/ },
  { name: "an unclosed quote", files: { "bad/t.yaml": 'prompt: "never closed\nchecks: []\n' }, args: ["run", "bad"], expect: /bad\/t\.yaml:1:9: yaml: / },
  { name: "an unknown key", files: { "bad/t.yaml": task("retries: 3\n") }, args: ["run", "bad"], expect: /bad\/t\.yaml:4:1: retries: unknown key/ },
  { name: "a missing prompt", files: { "bad/t.yaml": "policy: ../policy.yaml\nmodel: { provider: scripted, script: [{ say: ok }] }\n" }, args: ["run", "bad"], expect: /bad\/t\.yaml:1:1: prompt: / },
  { name: "a prompt of the wrong type", files: { "bad/t.yaml": "prompt: 42\n" }, args: ["run", "bad"], expect: /bad\/t\.yaml:1:9: prompt: / },
  { name: "a bad timeout", files: { "bad/t.yaml": task("limits: { timeout: 10 minutes }\n") }, args: ["run", "bad"], expect: /bad\/t\.yaml:4:20: limits\.timeout: / },
  { name: "a negative maxSteps", files: { "bad/t.yaml": task("limits: { maxSteps: -1 }\n") }, args: ["run", "bad"], expect: /bad\/t\.yaml:4:21: limits\.maxSteps: / },
  { name: "call and calls in one step", files: { "bad/t.yaml": "prompt: x\nmodel:\n  provider: scripted\n  script:\n    - call: shell\n      calls: []\n" }, args: ["run", "bad"], expect: /bad\/t\.yaml:6:14: model\.script\.0\.calls: call and calls exclude each other/ },
  { name: "an empty script step", files: { "bad/t.yaml": "prompt: x\nmodel:\n  provider: scripted\n  script:\n    - {}\n" }, args: ["run", "bad"], expect: /bad\/t\.yaml:5:7: model\.script\.0/ },
  { name: "checks that are not a list", files: { "bad/t.yaml": task("checks: npm test\n") }, args: ["run", "bad"], expect: /bad\/t\.yaml:4:9: checks: / },
  { name: "a check without run", files: { "bad/t.yaml": task("checks:\n  - { name: unit }\n") }, args: ["run", "bad"], expect: /bad\/t\.yaml:5:5: checks\.0/ },
  { name: "a workspace folder that does not exist", files: { "bad/t.yaml": task("workspace: { from: ../nowhere }\n") }, args: ["run", "bad"], expect: /bad\/t\.yaml:4:\d+: workspace\.from: .*nowhere/ },
  { name: "an image that does not exist", files: { "bad/t.yaml": task("images: [shot.png]\n") }, args: ["run", "bad"], expect: /bad\/t\.yaml:4:\d+: images\.0: / },
  { name: "a policy file that does not exist", files: { "bad/t.yaml": "prompt: x\npolicy: ../missing.yaml\n" }, args: ["run", "bad"], expect: /bad\/t\.yaml:2:9: policy: .*missing\.yaml/ },
  { name: "duplicate ids in a suite", files: { "bad/a.yaml": task("id: same\n"), "bad/b.yaml": task("id: same\n") }, args: ["run", "bad"], expect: /bad\/b\.yaml:4:5: id: .*bad\/a\.yaml/ },
  { name: "an unknown provider", files: { "bad/t.yaml": "prompt: x\nmodel: { provider: gpt, name: x }\n" }, args: ["run", "bad"], expect: /bad\/t\.yaml:2:\d+: model\.provider/ },
  { name: "an anthropic model without a name", files: { "bad/t.yaml": "prompt: x\nmodel: { provider: anthropic }\n" }, args: ["run", "bad"], expect: /bad\/t\.yaml:2:\d+: model/ },
  { name: "tags that are not a list", files: { "bad/t.yaml": task("tags: nightly\n") }, args: ["run", "bad"], expect: /bad\/t\.yaml:4:7: tags: / },
  { name: "an inline policy with an unknown key", files: { "bad/t.yaml": "prompt: x\nmodel: { provider: scripted, script: [{ say: ok }] }\npolicy: { default: deny, rules: [], ask: true }\n" }, args: ["run", "bad"], expect: /bad\/t\.yaml:3:\d+: .*ask/ },
  { name: "a policy file with bad YAML", files: { "bad/t.yaml": "prompt: x\nmodel: { provider: scripted, script: [{ say: ok }] }\npolicy: ../broken.yaml\n", "broken.yaml": "version: 1\ndefault: [deny\n" }, args: ["run", "bad"], expect: /broken\.yaml:\d+:\d+: / },
  { name: "a policy file with a wrong default", files: { "bad/t.yaml": "prompt: x\nmodel: { provider: scripted, script: [{ say: ok }] }\npolicy: ../wrong.yaml\n", "wrong.yaml": "version: 1\ndefault: ask\nrules: []\n" }, args: ["run", "bad"], expect: /wrong\.yaml:2:10: .*default/ },
  { name: "a shard out of range", args: ["run", "good", "--shard", "4/3"], expect: /--shard as i\/n .*got "4\/3"/ },
  { name: "a shard that is not i/n", args: ["run", "good", "--shard", "half"], expect: /--shard as i\/n .*got "half"/ },
  { name: "a concurrency of 0", args: ["run", "good", "--concurrency", "0"], expect: /--concurrency to be a whole number from 1 and up, got "0"/ },
  { name: "an unknown --provider", args: ["run", "good", "--provider", "foo", "--model", "m"], expect: /provider.*foo/i },
  { name: "a bad --timeout", args: ["run", "good", "--timeout", "soon"], expect: /--timeout as a duration .*got "soon"/ },
  { name: "a path that does not exist", args: ["run", "nope/"], expect: /nope/ },
  { name: "an unknown flag", args: ["run", "good", "--frobnicate"], expect: /Unknown argument: frobnicate/ },
  { name: "no paths", args: ["run"], expect: /Not enough non-option arguments|paths/ },
  { name: "a --policy that is a folder", files: { "plain/t.yaml": "prompt: x\nmodel: { provider: scripted, script: [{ say: ok }] }\n", "policy-folder/README": "not a policy\n" }, args: ["run", "plain", "--policy", "policy-folder"], expect: /policy-folder: cannot read the policy file: EISDIR/ },
  { name: "an unknown preset", files: { "plain/t.yaml": "prompt: x\nmodel: { provider: scripted, script: [{ say: ok }] }\n" }, args: ["run", "plain", "--policy", "preset:nope"], expect: /unknown preset `nope`/ },
  { name: "a task with no model and no --provider", files: { "plain/t.yaml": "prompt: x\n" }, args: ["run", "plain"], expect: /plain\/t\.yaml: the task names no model/ },
  { name: "an anthropic model without a key", files: { "plain/t.yaml": "prompt: x\nmodel: { provider: anthropic, name: claude-sonnet-4-5 }\n" }, args: ["run", "plain"], expect: /ANTHROPIC_API_KEY/ },
  { name: "a filter that selects nothing", args: ["run", "good", "--filter", "zzz/*"], expect: /no task to run/ },
  { name: "validate of a malformed task", files: { "bad/t.yaml": task("limits: { maxSteps: many }\n") }, args: ["validate", "bad"], expect: /bad\/t\.yaml:4:21: limits\.maxSteps/ },
  { name: "policy check with input that is not JSON", args: ["policy", "check", "--policy", "policy.yaml", "--tool", "shell", "--input", "{oops"], expect: /input/ },
];

test(`${cases.length} kinds of bad input are each exit 2 with a located message, earlier results untouched`, async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "good/a.yaml": taggingTask("a", 1) });
  const out = join(root, "run");
  const first = await runCli(["run", "good", "--out", out], { cwd: root });
  assert.equal(first.code, 0, first.stderr);
  const before = await snapshotTree(out);
  const env = cliEnv();
  delete env.ANTHROPIC_API_KEY;
  delete env.ANTHROPIC_BASE_URL;
  for (const c of cases) {
    await t.test(c.name, async () => {
      for (const dir of ["bad", "plain"]) await rm(join(root, dir), { recursive: true, force: true });
      await writeFiles(root, c.files ?? {});
      const args = c.args[0] === "run" ? [...c.args, "--out", out] : c.args;
      const result = await runCli(args, { cwd: root, env: { ...env, ...c.env } });
      assert.equal(result.code, 2, `exit code; stderr: ${result.stderr}`);
      assert.match(result.stderr, c.expect);
      assert.doesNotMatch(result.stderr, /\n\s+at .*\.js:\d+/, "no stack trace");
      assert.deepEqual(await snapshotTree(out), before, "the run directory is untouched");
    });
  }
});

test("a corrupt manifest is exit 2 naming the file and the way out, and the run directory is left as it was", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "good/a.yaml": taggingTask("a", 1) });
  const out = join(root, "run");
  assert.equal((await runCli(["run", "good", "--out", out], { cwd: root })).code, 0);
  const manifest = join(out, "manifest.json");
  await writeFile(manifest, (await readFile(manifest, "utf8")).slice(0, 40));
  const before = await snapshotTree(out);
  const result = await runCli(["run", "good", "--out", out], { cwd: root });
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, new RegExp(`^rhema: ${manifest}: not a rhema run manifest \\(not JSON: .*\\); pass another --out or remove the folder\\n$`));
  assert.deepEqual(await snapshotTree(out), before, "nothing in it changed");
});
