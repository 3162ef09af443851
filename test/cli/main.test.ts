/**
 * The CLI's wiring (src/cli/main.ts): each command gets the flags its own builder declares,
 * typed, with defaults applied; missing or unknown flags are usage errors (exit 2). Runs
 * `main` in this process with captured streams, and the built CLI once for `--help`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
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
  assert.equal(plain.code, 1);
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
    code: 0, stderr: "", stdout: "valid: 1 task in 1 suite, 1 policy in use\n  suite/a: sandbox auto (default), network deny (default)\n",
  });
  const unset = await rhema(["validate", "suite"], dir);
  assert.deepEqual({ code: unset.code, stdout: unset.stdout }, { code: 0, stdout: "valid: 1 task in 1 suite, 1 policy in use\n  suite/a: sandbox auto (default), network deny (default)\n" });
  assert.match(unset.stderr, /^rhema: 1 task names no policy and no --policy was given: it runs under the read-only preset/);
});

test("policy check --help lists the flags policy-command declares, with their descriptions", async (t) => {
  const help = await runCli(["policy", "check", "--help"], { cwd: await tempDir(t) });
  assert.equal(help.code, 0, help.stderr);
  for (const line of [
    "--policy     policy file, or preset:read-only|workspace-write|ci",
    "--tool       built-in tool name (read_file, write_file, edit_file, list_dir, glob, grep,",
    "--workspace  workspace folder (default: the current folder)",
    "--json       print one JSON object: {decision, rule, reason}, or {error} for invalid",
  ]) {
    assert.ok(help.stdout.includes(line), `missing ${JSON.stringify(line)} in\n${help.stdout}`);
  }
});

test("-h is --help, and an unknown command says so and lists the commands", async (t) => {
  const dir = await tempDir(t);
  const short = await runCli(["run", "-h"], { cwd: dir });
  const long = await runCli(["run", "--help"], { cwd: dir });
  assert.equal(short.code, 0, short.stderr);
  assert.equal(short.stdout, long.stdout);
  assert.deepEqual(await rhema(["bogus"], dir), {
    code: 2, stdout: "",
    stderr: "rhema: Unknown command \"bogus\". The commands are: run, validate, policy check, report merge, report compare, report trend, report html, bench replay, bench calibrate, cassette show, cassette prune\nSee `rhema --help`.\n",
  });
  assert.match((await rhema(["policy", "chek"], dir)).stderr, /^rhema: Unknown command "policy chek"\. The commands are: /);
});

test("every command's help describes every option, shows no [default: []] on positionals, and has examples", async (t) => {
  const dir = await tempDir(t);
  for (const command of [["run"], ["validate"], ["policy", "check"], ["report", "merge"], ["report", "compare"]]) {
    const help = await runCli([...command, "--help"], { cwd: dir });
    assert.equal(help.code, 0, help.stderr);
    const positionals = /Positionals:\n([\s\S]*?)\n\n/.exec(help.stdout)?.[1] ?? "";
    assert.ok(!positionals.includes("[default: []]"), `${command.join(" ")}: ${positionals}`);
    assert.match(help.stdout, /\nExamples:\n {2}rhema /, command.join(" "));
    const optionsSection = /\nOptions:\n([\s\S]*?)\n\n/.exec(help.stdout)?.[1] ?? "";
    const options = optionsSection.split("\n").filter((line) => /^ {2}(-\w, )?--[\w-]+/.test(line) || /^ {6}--[\w-]+/.test(line));
    assert.ok(options.length > 2, command.join(" "));
    for (const line of options) assert.match(line, /^\s+(-\w, )?--[\w-]+\s{2,}\S/, `${command.join(" ")}: an option without a description: ${line}`);
  }
});

test("bad --max-steps and --concurrency are exit 2 naming the flag and what was given, before anything is written", async (t) => {
  const dir = await tempDir(t);
  await writeFiles(dir, { "suite/a.yaml": "prompt: hi\nmodel: { provider: scripted, script: [{ say: ok }] }\n" });
  for (const [flag, value] of [["--max-steps", "0"], ["--max-steps", "1.5"], ["--concurrency", "abc"], ["--concurrency", "-2"]] as const) {
    const result = await rhema(["run", "suite", flag, value, "--out", "out"], dir);
    assert.deepEqual(result, {
      code: 2, stdout: "", stderr: `rhema: Expected ${flag} to be a whole number from 1 and up, got "${value}"\n`,
    });
  }
  assert.equal(existsSync(join(dir, "out")), false);
});
