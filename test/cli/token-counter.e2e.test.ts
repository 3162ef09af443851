/**
 * The token counter through the built CLI: a scripted run counts with chars4 and never loads the
 * tokenizer's chunk, a run given `--calibration` records the calibration in the trial's
 * checkpoint, and planning an OpenAI model loads its encoding's chunk (the control that shows
 * the load log sees a load when there is one).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { cliEnv, runCli } from "../support/cli.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { calibrationId, formatCalibration } from "../../src/tokens/calibration-file.js";

const SCRIPTED = `prompt: Write hello to out.txt.
model:
  provider: scripted
  script:
    - call: write_file
      input: { path: out.txt, content: hello }
    - say: done
policy:
  default: deny
  rules:
    - allow: { tools: [write_file] }
checks:
  - { name: written, run: test -f out.txt }
`;

const OPENAI = `prompt: Say hi.
model: { provider: openai, name: gpt-4o-mini }
`;

/** A preload that logs every file read whose name says tokenizer (the bundle's chunks, the package's files). */
async function loadLogger(dir: string): Promise<{ env: Record<string, string>; loads: () => Promise<string[]> }> {
  await mkdir(dir, { recursive: true });
  const preload = join(dir, "log-loads.cjs");
  const log = join(dir, "loads.log");
  // The CLI runs its chunks itself (code-cache.ts), not through require: log the files it reads.
  await writeFile(preload, `const fs = require("node:fs");
const read = fs.readFileSync;
fs.readFileSync = function (path, ...rest) {
  if (/tokenizer/.test(String(path))) fs.appendFileSync(${JSON.stringify(log)}, String(path) + "\\n");
  return read.call(this, path, ...rest);
};
require("node:module").syncBuiltinESMExports();
`);
  return {
    env: cliEnv({ NODE_OPTIONS: `--require ${preload}` }),
    loads: async () => (await readFile(log, "utf8").catch(() => "")).split("\n").filter(Boolean),
  };
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) if (entry.isFile()) out.push(join(entry.parentPath, entry.name));
  return out;
}

test("a scripted run never loads the tokenizer chunk; planning an OpenAI model loads its encoding's", async (t) => {
  const dir = await tempDir(t);
  await writeFiles(dir, { "suite/echo.yaml": SCRIPTED, "openai/hi.yaml": OPENAI });
  const scripted = await loadLogger(join(dir, "a"));
  const run = await runCli(["run", "suite", "--out", "out"], { cwd: dir, env: scripted.env });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(await scripted.loads(), []);
  const openai = await loadLogger(join(dir, "b"));
  const validate = await runCli(["validate", "openai"], { cwd: dir, env: { ...openai.env, OPENAI_API_KEY: "sk-test" } });
  assert.equal(validate.code, 0, validate.stderr);
  assert.ok((await openai.loads()).some((m) => /tokenizer-o200k/.test(m)), `loads: ${(await openai.loads()).join(", ")}`);
});

test("run --calibration records the calibration's id and factors in the trial's checkpoint; a bad file is exit 2 naming it", async (t) => {
  const dir = await tempDir(t);
  const factors = { perChar: { prose: 0.3, code: 0.4, json: 0.35, tool_result: 0.33 }, perMessage: 3, perToolBlock: 2 };
  await writeFiles(dir, { "suite/echo.yaml": SCRIPTED, "cal.json": formatCalibration({ version: 1, fittedFrom: "test", factors, fit: null }) });
  const run = await runCli(["run", "suite", "--out", "out", "--calibration", "cal.json"], { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  const checkpoint = (await Promise.all((await filesUnder(join(dir, "out", "tasks"))).filter((f) => /session\.(json|journal\.jsonl)$/.test(f)).map((f) => readFile(f, "utf8")))).join("\n");
  assert.ok(checkpoint.includes(`"kind":"calibrated","id":"${calibrationId(factors)}"`) || checkpoint.includes(`"id": "${calibrationId(factors)}"`), "the checkpoint names the calibration");
  await writeFile(join(dir, "bad.json"), '{"version": 1, "fittedFrom": "x", "factors": {"perChar": {"prose": "a"}}}');
  const bad = await runCli(["run", "suite", "--out", "out2", "--calibration", "bad.json"], { cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--calibration .*bad\.json: field "factors\.perChar\.prose"/);
});
