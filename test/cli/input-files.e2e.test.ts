/**
 * Input files through the built CLI (issue #20, items 7 and 8): a `--policy` that cannot be read
 * is exit 2 whatever the tasks name; discovery skips the run directory and what a `.rhemaignore`
 * excludes; every input file (task, policy, pricing, `.rhemaignore`) is UTF-8 text or exit 2 at
 * its first bad byte; several typos in one file are each reported on their own line with a "did
 * you mean", and a policy's problems all come in one round.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const SCRIPTED = "model: { provider: scripted, script: [{ say: ok }] }\n";
const OWN_POLICY_TASK = `prompt: Say ok.\npolicy: ../policy.yaml\n${SCRIPTED}`;
const NO_STACK = /\n\s+at .*\.js:\d+/;

/** A file not found, as the policy loader words it. */
const unreadablePolicy = (file: string) => `rhema: ${file}: cannot read the policy file: ENOENT: no such file or directory, open '${file}'\n`;

test("a --policy that cannot be read is exit 2, even when every task names its own policy", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "own/a.yaml": OWN_POLICY_TASK });
  const missing = join(root, "no/such/file.yaml");
  for (const args of [
    ["validate", "own", "--policy", missing],
    ["validate", "policy.yaml", "--policy", missing],
    ["run", "own", "--policy", missing, "--out", join(root, "runs")],
  ]) {
    await t.test(args.slice(0, 2).join(" "), async () => {
      const result = await runCli(args, { cwd: root });
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stderr, unreadablePolicy(missing));
    });
  }
  await t.test("a relative --policy names the file it looked for", async () => {
    const result = await runCli(["validate", "own", "--policy", "gone.yaml"], { cwd: root });
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stderr, unreadablePolicy(join(root, "gone.yaml")));
  });
});

test("`run . --out runs` twice: the run directory's workspace copies are not read as tasks, wherever --out points", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "shop/fix.yaml": `prompt: Fix it.\npolicy: ../policy.yaml\nworkspace: { from: ../fixture }\n${SCRIPTED}`,
    "fixture/config.yaml": "name: shop\nport: 8080\n",
  });
  for (const out of ["runs", "deep/er/runs"]) {
    await t.test(`--out ${out}`, async () => {
      for (const round of [1, 2]) {
        const result = await runCli(["run", ".", "--out", out], { cwd: root });
        assert.equal(result.code, 0, `round ${round}: ${result.stderr}`);
      }
      // A later command without --out skips the run directory too: it holds a run manifest.
      const validate = await runCli(["validate", "."], { cwd: root });
      assert.equal(validate.code, 0, validate.stderr);
      assert.match(validate.stdout, /^valid: 1 task in 1 suite, 1 policy in use and 1 policy file\n/);
    });
  }
});

test(".rhemaignore (gitignore syntax) excludes fixture YAML from discovery, in the PATH folder and below", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/a.yaml": OWN_POLICY_TASK,
    "suite/fixtures/data.yaml": "name: x\n",
    "suite/nested/b.yaml": OWN_POLICY_TASK.replace("prompt:", "id: b\nprompt:").replace("../policy.yaml", "../../policy.yaml"),
    "suite/nested/sample.fixture.yaml": "rows: [1, 2]\n",
    "suite/nested/keep.fixture.yaml": OWN_POLICY_TASK.replace("prompt:", "id: keep\nprompt:").replace("../policy.yaml", "../../policy.yaml"),
  });
  const before = await runCli(["validate", "suite"], { cwd: root });
  assert.equal(before.code, 2, "without .rhemaignore the fixtures are read as tasks");
  assert.match(before.stderr, /fixtures\/data\.yaml:1:1: name: unknown key/);
  await writeFiles(root, {
    "suite/.rhemaignore": "# fixtures are data\nfixtures/\n*.fixture.yaml\n",
    "suite/nested/.rhemaignore": "!keep.fixture.yaml\n",
  });
  for (const path of ["suite", "suite/**/*.yaml"]) {
    await t.test(`validate ${path}`, async () => {
      const result = await runCli(["validate", path], { cwd: root });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout.split("\n")[0], "valid: 3 tasks in 2 suites, 1 policy in use");
      assert.deepEqual(result.stdout.split("\n").slice(1, -1).map((line) => line.split(":")[0]!.trim()), ["nested/b", "nested/keep", "suite/a"]);
    });
  }
  await t.test("a .rhemaignore in cwd, above the PATH folder, counts too (as a repository's root .gitignore)", async () => {
    await writeFiles(root, { "other/t.yaml": OWN_POLICY_TASK, "other/seed.yaml": "rows: [1]\n", ".rhemaignore": "other/seed.yaml\n" });
    const result = await runCli(["validate", "other"], { cwd: root });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.split("\n")[0], "valid: 1 task in 1 suite, 1 policy in use");
  });
  await t.test("a file named explicitly is read whatever .rhemaignore says", async () => {
    const result = await runCli(["validate", "suite/fixtures/data.yaml"], { cwd: root });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /data\.yaml:1:1: name: unknown key/);
  });
});

interface EncodingCase {
  name: string;
  /** The file written (relative to the temp root) and its bytes. */
  file: string;
  bytes: Buffer;
  args: string[];
  /** The located message after `rhema: <absolute file>:`. */
  expect: string;
}

const INVALID = "not UTF-8 text (byte 0xe9); save the file as UTF-8";

const encodingCases: EncodingCase[] = [
  { name: "a Latin-1 task file", file: "bad/t.yaml", bytes: Buffer.from("prompt: caf\xe9\n", "latin1"), args: ["validate", "bad"], expect: `1:12: ${INVALID}` },
  { name: "a Latin-1 task file, run", file: "bad/t.yaml", bytes: Buffer.from(`prompt: caf\xe9\n${SCRIPTED}`, "latin1"), args: ["run", "bad", "--out", "runs"], expect: `1:12: ${INVALID}` },
  {
    name: "a bad byte after multi-byte characters, on line 2",
    file: "bad/t.yaml",
    bytes: Buffer.concat([Buffer.from('id: t\nprompt: "né 😀 caf'), Buffer.from([0xe9]), Buffer.from('"\n')]),
    args: ["validate", "bad"],
    expect: `2:18: ${INVALID}`,
  },
  { name: "a UTF-16 task file with a byte-order mark", file: "bad/t.yaml", bytes: Buffer.from("\ufeffprompt: hi\n", "utf16le"), args: ["validate", "bad"], expect: "1:1: not UTF-8 text: it is UTF-16 (little-endian), by its byte-order mark; save the file as UTF-8" },
  { name: "a big-endian UTF-16 task file", file: "bad/t.yaml", bytes: Buffer.from([0xfe, 0xff, 0x00, 0x70]), args: ["validate", "bad"], expect: "1:1: not UTF-8 text: it is UTF-16 (big-endian), by its byte-order mark; save the file as UTF-8" },
  { name: "a binary file named .yaml", file: "bad/t.yaml", bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), args: ["validate", "bad"], expect: "1:1: not UTF-8 text (byte 0x89); save the file as UTF-8" },
  { name: "a NUL byte", file: "bad/t.yaml", bytes: Buffer.from("prompt: a\0b\n"), args: ["validate", "bad"], expect: "1:10: not UTF-8 text: a NUL byte (a binary file, or UTF-16 without a byte-order mark?)" },
  { name: "a truncated UTF-8 sequence at the end", file: "bad/t.yaml", bytes: Buffer.from([...Buffer.from("prompt: ok\n# "), 0xe2, 0x82]), args: ["validate", "bad"], expect: "2:3: not UTF-8 text (byte 0xe2); save the file as UTF-8" },
  { name: "a Latin-1 --policy file", file: "latin.yaml", bytes: Buffer.from("version: 1\ndefault: deny\nrules: []\n# caf\xe9\n", "latin1"), args: ["validate", "good", "--policy", "latin.yaml"], expect: `4:6: ${INVALID}` },
  { name: "a Latin-1 policy file among the paths", file: "pols/latin.yaml", bytes: Buffer.from("version: 1\ndefault: deny # caf\xe9\nrules: []\n", "latin1"), args: ["validate", "pols"], expect: `2:20: ${INVALID}` },
  { name: "a Latin-1 policy file a task names", file: "bad/t.yaml", bytes: Buffer.from(`prompt: x\npolicy: ../latin-policy.yaml\n${SCRIPTED}`), args: ["validate", "bad"], expect: "" },
  { name: "a UTF-16 --pricing file", file: "prices.yaml", bytes: Buffer.from("\ufeffversion: 1\n", "utf16le"), args: ["validate", "good", "--pricing", "prices.yaml"], expect: "1:1: not UTF-8 text: it is UTF-16 (little-endian), by its byte-order mark; save the file as UTF-8" },
  { name: "a Latin-1 --pricing file, run", file: "prices.yaml", bytes: Buffer.from("version: 1 # \xe9\n", "latin1"), args: ["run", "good", "--pricing", "prices.yaml", "--out", "runs"], expect: `1:14: ${INVALID}` },
  { name: "a Latin-1 .rhemaignore", file: "good/.rhemaignore", bytes: Buffer.from("fixtures/ # caf\xe9\n", "latin1"), args: ["validate", "good"], expect: `1:16: ${INVALID}` },
];

test(`${encodingCases.length} input files that are not UTF-8 text are each exit 2 at their first bad byte`, async (t) => {
  for (const c of encodingCases) {
    await t.test(c.name, async () => {
      const root = await tempDir(t);
      await writeFiles(root, { "policy.yaml": OPEN_POLICY, "good/a.yaml": OWN_POLICY_TASK });
      await writeFile(join(root, "latin-policy.yaml"), Buffer.from("version: 1\ndefault: deny\nrules: [] # caf\xe9\n", "latin1"));
      await writeFiles(root, { [c.file]: "" });
      await writeFile(join(root, c.file), c.bytes);
      const result = await runCli(c.args, { cwd: root });
      assert.equal(result.code, 2, result.stderr);
      const expected = c.expect === "" ? `rhema: ${join(root, "latin-policy.yaml")}:3:16: ${INVALID}\n` : `rhema: ${join(root, c.file)}:${c.expect}\n`;
      assert.equal(result.stderr, expected);
      assert.doesNotMatch(result.stderr, NO_STACK);
    });
  }
});

const TASK_KEYS = "id, suite, prompt, images, workspace, policy, model, limits, transcript, checks, output, tags, repeats, pass, seed, pin, cassette, mcp, sandbox";
const LIMIT_KEYS = "maxSteps, timeout, streamIdle, maxCostUsd, maxTokens";

test("several typos in one task file: each on its own line with a did-you-mean, no 'required' for the misspelt key", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "bad/t.yaml": "promt: Do it.\nmodel: { provider: scripted, script: [{ sya: ok }] }\ntgas: [a]\nlimits: { maxStep: 3, timout: 5m }\n" });
  const result = await runCli(["validate", "bad"], { cwd: root });
  assert.equal(result.code, 2, result.stderr);
  const file = join(root, "bad/t.yaml");
  assert.equal(result.stderr, [
    `rhema: ${file}:1:1: promt: unknown key; did you mean \`prompt\`? (expected one of: ${TASK_KEYS})`,
    `${file}:2:41: model.script.0.sya: unknown key; did you mean \`say\`? (expected one of: say, call, input, calls, fail, chunkDelayMs, reasoningTokens)`,
    `${file}:3:1: tgas: unknown key; did you mean \`tags\`? (expected one of: ${TASK_KEYS})`,
    `${file}:4:11: limits.maxStep: unknown key; did you mean \`maxSteps\`? (expected one of: ${LIMIT_KEYS})`,
    `${file}:4:23: limits.timout: unknown key; did you mean \`timeout\`? (expected one of: ${LIMIT_KEYS})`,
    "",
  ].join("\n"));
});

test("a policy's problems come in one round: unknown keys with did-you-mean, misspelt tools, and every policy in use", async (t) => {
  const root = await tempDir(t);
  const policy = "version: 1\ndefualt: deny\nrules:\n  - allow: { tols: [read_file] }\n  - deny: { tools: [shel] }\n  - allow: { tools: [edit_fiel], pahts: [\"src/**\"] }\n";
  await writeFiles(root, {
    "pol.yaml": policy,
    "tasks/a.yaml": `prompt: x\npolicy: ../pol.yaml\n${SCRIPTED}`,
    "tasks/b.yaml": `prompt: x\n${SCRIPTED}policy:\n  default: deny\n  rules:\n    - deny: { tools: [grpe] }\n`,
  });
  const file = join(root, "pol.yaml");
  const policyLines = [
    `${file}:2:1: unknown key \`defualt\`; did you mean \`default\`?`,
    `${file}:4:14: rules.0.allow: unknown key \`tols\`; did you mean \`tools\`?`,
    `${file}:5:21: rules.1.deny.tools.0: \`shel\` is not a built-in tool: did you mean \`shell\`?`,
    `${file}:6:22: rules.2.allow.tools.0: \`edit_fiel\` is not a built-in tool: did you mean \`edit_file\`?`,
    `${file}:6:34: rules.2.allow: unknown key \`pahts\`; did you mean \`paths\`?`,
  ];
  await t.test("validate the policy file", async () => {
    const result = await runCli(["validate", "pol.yaml"], { cwd: root });
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stderr, `rhema: ${policyLines.join("\n")}\n`);
  });
  await t.test("policy check", async () => {
    const result = await runCli(["policy", "check", "--policy", "pol.yaml", "--tool", "read_file", "--input", "{\"path\":\"a\"}"], { cwd: root });
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stderr, `rhema: ${policyLines.join("\n")}\n`);
  });
  await t.test("two tasks with two bad policies: both reported at once", async () => {
    const result = await runCli(["validate", "tasks"], { cwd: root });
    assert.equal(result.code, 2, result.stderr);
    const task = join(root, "tasks/b.yaml");
    assert.equal(result.stderr, `rhema: ${[...policyLines, `${task}:6:23: policy: rules.0.deny.tools.0: \`grpe\` is not a built-in tool: did you mean \`grep\`?`].join("\n")}\n`);
  });
});
