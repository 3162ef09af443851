/**
 * `rhema validate` and `rhema run` plan a suite with one planner (runner/plan/), so they agree:
 * a suite and flags one refuses (exit 2) the other refuses with the same message, and a suite
 * one accepts the other accepts. A table of hostile suites and flags, each through both built
 * commands.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { cliEnv, runCli, type CliResult } from "../support/cli.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

interface ParityCase {
  name: string;
  /** Files under the case's folder; the suite is `s/`. */
  files: Record<string, string>;
  /** Flags given to both commands after the suite. */
  flags?: string[];
  /** A message both must give (exit 2); null: both accept. */
  refused: RegExp | null;
}

const SCRIPTED = "model: { provider: scripted, script: [{ say: done }] }\n";
const task = (body: string) => `prompt: Say done.\npolicy: ../policy.yaml\n${body}`;
const BAD_POLICY = "version: 1\ndefault: maybe\n";

const cases: ParityCase[] = [
  { name: "a task with no model and no --provider", files: { "s/t.yaml": task("") }, refused: /s\/t\.yaml: the task names no model/ },
  { name: "--provider without --model", files: { "s/t.yaml": task("") }, flags: ["--provider", "openai"], refused: /--provider openai needs --model NAME/ },
  { name: "an unknown --provider", files: { "s/t.yaml": task("") }, flags: ["--provider", "nope", "--model", "m"], refused: /provider/ },
  { name: "a named model without an API key", files: { "s/t.yaml": task("model: { provider: anthropic, name: claude-sonnet-4-6 }\n") }, refused: /set ANTHROPIC_API_KEY/ },
  { name: "a compaction worker without an API key", files: { "s/t.yaml": task(`${SCRIPTED}transcript: { worker: { provider: openai, name: gpt-4o-mini } }\n`) }, refused: /set OPENAI_API_KEY/ },
  { name: "a task cost budget on an unpriced scripted task", files: { "s/t.yaml": task(`${SCRIPTED}limits: { maxCostUsd: 1 }\n`) }, refused: /s\/t/ },
  { name: "--max-cost over an unpriced model", files: { "s/t.yaml": task(SCRIPTED) }, flags: ["--max-cost", "5"], refused: /s\/t/ },
  { name: "--max-cost that is no amount", files: { "s/t.yaml": task(SCRIPTED) }, flags: ["--max-cost", "lots"], refused: /--max-cost/ },
  { name: "--stream-idle that is no duration", files: { "s/t.yaml": task(SCRIPTED) }, flags: ["--stream-idle", "soon"], refused: /--stream-idle/ },
  { name: "--timeout that is no duration", files: { "s/t.yaml": task(SCRIPTED) }, flags: ["--timeout", "soon"], refused: /--timeout/ },
  { name: "a policy file that is not valid", files: { "s/t.yaml": task(SCRIPTED), "policy.yaml": BAD_POLICY }, refused: /policy\.yaml:2/ },
  { name: "a --policy that is not valid", files: { "s/t.yaml": `prompt: Say done.\n${SCRIPTED}`, "flag-policy.yaml": BAD_POLICY }, flags: ["--policy", "flag-policy.yaml"], refused: /flag-policy\.yaml:2/ },
  { name: "a pricing file that is not valid", files: { "s/t.yaml": task(SCRIPTED), "prices.yaml": "version: 1\nmodels: []\n" }, flags: ["--pricing", "prices.yaml"], refused: /prices\.yaml/ },
  { name: "a pricing file naming an unknown provider", files: { "s/t.yaml": task(SCRIPTED), "prices.yaml": "version: 1\nmodels: [{ provider: nope, model: m, inputPerMTok: 1, outputPerMTok: 1 }]\n" }, flags: ["--pricing", "prices.yaml"], refused: /models\.0\.provider/ },
  { name: "a scripted task priced as a known model, with a run budget", files: { "s/t.yaml": task("model: { provider: scripted, script: [{ say: done }], priceAs: claude-sonnet-4-6 }\n") }, flags: ["--max-cost", "5"], refused: null },
  { name: "a scripted task with its own policy", files: { "s/t.yaml": task(SCRIPTED) }, refused: null },
  { name: "a model from the flags, priced by a pricing file, with a budget", files: { "s/t.yaml": task("limits: { maxSteps: 1, maxCostUsd: 1 }\n"), "prices.yaml": "version: 1\nmodels: [{ provider: openai, model: local, inputPerMTok: 0, outputPerMTok: 0 }]\n" }, flags: ["--provider", "openai", "--model", "local", "--base-url", "http://127.0.0.1:9/v1", "--pricing", "prices.yaml", "--timeout", "1s"], refused: null },
];

/** The environment both commands run in: no provider key or base URL from the machine's. */
const env = cliEnv({ ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "", ANTHROPIC_BASE_URL: "", OPENAI_BASE_URL: "" });

/** The error lines a refusal gave (its notes and warnings aside). */
function errorLines(result: CliResult): string[] {
  return result.stderr.split("\n").filter((line) => line.trim() !== "" && !/^rhema: (note|warning|unpriced)\b/.test(line) && !line.includes("read-only preset"));
}

for (const c of cases) {
  test(`validate and run agree: ${c.name}`, async (t) => {
    const root = await tempDir(t);
    await writeFiles(root, { "policy.yaml": OPEN_POLICY, ...c.files });
    const flags = c.flags ?? [];
    const validate = await runCli(["validate", "s", ...flags], { cwd: root, env });
    const run = await runCli(["run", "s", "--out", join(root, "out"), ...flags], { cwd: root, env });
    const seen = `validate: ${validate.code}\n${validate.stderr}\nrun: ${run.code}\n${run.stderr}`;
    if (c.refused === null) {
      assert.equal(validate.code, 0, seen);
      assert.notEqual(run.code, 2, seen);
      return;
    }
    assert.equal(validate.code, 2, seen);
    assert.equal(run.code, 2, seen);
    assert.match(validate.stderr, c.refused, seen);
    assert.deepEqual(errorLines(validate), errorLines(run), seen);
    assert.doesNotMatch(validate.stderr + run.stderr, /\n\s+at /, "no stack trace");
  });
}

test("validate warns of a gate no outcome of the task's trials can pass, and of no other", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "s/five.yaml": task(`${SCRIPTED}repeats: 5\npass: { rate: 0.8 }\n`),
    "s/sixteen.yaml": task(`${SCRIPTED}repeats: 16\npass: { rate: 0.8 }\n`),
    "s/flagged.yaml": task(SCRIPTED),
  });
  const lower = await runCli(["validate", "s", "--gate", "lower"], { cwd: root, env });
  assert.equal(lower.code, 0, lower.stderr);
  assert.match(lower.stderr, /warning: s\/five: rate 0\.8 judged on the lower bound of its 95 % interval: 5 of 5 cannot pass it; it takes 16 of 16/);
  assert.doesNotMatch(lower.stderr, /s\/sixteen:|s\/flagged:/);
  // The flags stand in for what a task file leaves out: 3 repeats at --min-pass-rate 0.5 judged on the lower bound.
  const flagged = await runCli(["validate", "s", "--gate", "lower", "--repeats", "3", "--min-pass-rate", "0.5"], { cwd: root, env });
  assert.match(flagged.stderr, /warning: s\/flagged: rate 0\.5 judged on the lower bound of its 95 % interval: 3 of 3 cannot pass it; it takes 4 of 4/);
  const rate = await runCli(["validate", "s"], { cwd: root, env });
  assert.equal(rate.code, 0, rate.stderr);
  assert.doesNotMatch(rate.stderr, /cannot pass/);
});
