/**
 * The CLI's wiring (src/cli/main.ts): each command gets the flags its own builder declares,
 * typed, with defaults applied; missing or unknown flags are usage errors (exit 2). Runs
 * `main` in this process with captured streams, and the built CLI once for `--help`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/io.js";
import { runCli } from "../support/cli.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

function capture(): { stream: Writable; text: () => string } {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

async function rhema(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = capture();
  const err = capture();
  const io: CliIo = { cwd, env: {}, stdout: out.stream, stderr: err.stream, pid: process.pid, interrupt: new AbortController().signal };
  const code = await main(args, io);
  return { code, stdout: out.text(), stderr: err.text() };
}

test("policy check gets its flags, the workspace defaulting to the folder it runs in", async (t) => {
  const dir = await tempDir(t);
  const result = await rhema(["policy", "check", "--policy", "preset:ci", "--tool", "shell", "--input", '{"command":"npm test"}', "--json"], dir);
  assert.deepEqual({ ...result, stdout: JSON.parse(result.stdout) as unknown }, {
    code: 0, stderr: "",
    stdout: { decision: "allow", rule: "rule 8 (preset:ci:12)", reason: "`npm test` is allowed" },
  });
  const plain = await rhema(["policy", "check", "--policy", "preset:ci", "--tool", "shell", "--input", '{"command":"git push"}'], dir);
  assert.equal(plain.code, 0);
  assert.match(plain.stdout, /^decision: deny\nrule: .+\nreason: .+\n$/);
});

test("a missing required flag or an unknown one is a usage error, exit 2", async (t) => {
  const dir = await tempDir(t);
  assert.deepEqual(await rhema(["policy", "check", "--policy", "preset:ci", "--input", "{}"], dir), {
    code: 2, stdout: "", stderr: "rhema: Missing required argument: tool\nSee `rhema --help`.\n",
  });
  assert.deepEqual(await rhema(["report", "merge", "a", "b"], dir), {
    code: 2, stdout: "", stderr: "rhema: Missing required argument: out\nSee `rhema --help`.\n",
  });
  assert.deepEqual(await rhema(["validate", "x", "--polcy", "p.yaml"], dir), {
    code: 2, stdout: "", stderr: "rhema: Unknown argument: polcy\nSee `rhema --help`.\n",
  });
});

test("validate gets its paths and its --policy", async (t) => {
  const dir = await tempDir(t);
  await writeFiles(dir, { "suite/a.yaml": "prompt: hi\nmodel: { provider: scripted, script: [{ say: ok }] }\n", "policy.yaml": OPEN_POLICY });
  assert.deepEqual(await rhema(["validate", "suite", "--policy", "policy.yaml"], dir), {
    code: 0, stderr: "", stdout: "valid: 1 task(s) in 1 suite(s), 1 policy\n",
  });
  const unset = await rhema(["validate", "suite"], dir);
  assert.deepEqual({ code: unset.code, stdout: unset.stdout }, { code: 0, stdout: "valid: 1 task(s) in 1 suite(s), 1 policy\n" });
  assert.match(unset.stderr, /^rhema: 1 task\(s\) name no policy and no --policy was given: they run under the read-only preset/);
});

test("policy check --help lists the flags policy-command declares, with their descriptions", async (t) => {
  const help = await runCli(["policy", "check", "--help"], { cwd: await tempDir(t) });
  assert.equal(help.code, 0, help.stderr);
  for (const line of [
    "--policy     policy file, or preset:read-only|workspace-write|ci",
    "--tool       tool name, e.g. shell or write_file",
    "--workspace  workspace folder (default: the current folder)",
    "--json       print one JSON object {decision, rule, reason}",
  ]) {
    assert.ok(help.stdout.includes(line), `missing ${JSON.stringify(line)} in\n${help.stdout}`);
  }
});
