/**
 * `bench calibrate` on rhema run directories, and a resume across a changed calibration, through
 * the built CLI. The scripted provider stands in for a provider that bills by its own tokenizer:
 * run with `--calibration TRUE`, it reports usage counted with TRUE's factors, so a fit on the
 * run directory must find them again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { formatCalibration, parseCalibration } from "../../src/tokens/calibration-file.js";

const TRUE_FACTORS = { perChar: { prose: 0.3, code: 0.45, json: 0.4, tool_result: 0.35 }, perMessage: 5, perToolBlock: 3 };

/** A scripted task that writes and reads files of `size` characters, explains in prose and shows code. */
function task(n: number, size: number): string {
  const code = Array.from({ length: size / 40 }, (_, i) => `const v${i} = compute(${i}, "${n}"); // ${i}`).join("\n");
  const prose = "The totals were off because the rounding happened per line and not per invoice, so I moved it. ".repeat(size / 400 + 1);
  const q = (text: string) => JSON.stringify(text);
  return `prompt: Fix the totals in task ${n}.
model:
  provider: scripted
  script:
    - say: ${q(prose)}
      call: write_file
      input: { path: a${n}.js, content: ${q(code)} }
    - call: read_file
      input: { path: a${n}.js }
    - say: ${q(`Here it is:\n\`\`\`js\n${code.slice(0, size / 2)}\n\`\`\``)}
      call: write_file
      input: { path: b${n}.txt, content: ${q(prose)} }
    - call: read_file
      input: { path: b${n}.txt }
    - say: done
policy:
  default: deny
  rules:
    - allow: { tools: [write_file, read_file] }
`;
}

test("bench calibrate on a run directory finds the factors its usage was counted with, and prints the fit and held-out errors", async (t) => {
  const dir = await tempDir(t);
  await writeFiles(dir, {
    "true.json": formatCalibration({ version: 1, fittedFrom: "test", factors: TRUE_FACTORS, fit: null }),
    ...Object.fromEntries([1, 2, 3, 4].map((n) => [`suite/t${n}.yaml`, task(n, 800 * n)])),
  });
  const run = await runCli(["run", "suite", "--out", "out", "--calibration", "true.json"], { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  const fit = await runCli(["bench", "calibrate", "out", "--out", "fit.json"], { cwd: dir });
  assert.equal(fit.code, 0, fit.stderr);
  assert.match(fit.stdout, /^calibration: 20 requests of 4 sessions$/m);
  assert.match(fit.stdout, /^held-out error \(4-fold by session\): aggregate [+-]\d+\.\d %/m);
  const file = parseCalibration(await readFile(join(dir, "fit.json"), "utf8"), "fit.json");
  t.diagnostic(`fitted ${JSON.stringify(file.factors)}; fit ${JSON.stringify(file.fit)}`);
  assert.ok(Math.abs(file.fit!.fitted.aggregateErrorPct) < 1, `fitted aggregate ${file.fit!.fitted.aggregateErrorPct} %`);
  assert.ok(Math.abs(file.fit!.heldOut!.aggregateErrorPct) < 2, `held-out aggregate ${file.fit!.heldOut!.aggregateErrorPct} %`);
  for (const kind of ["json", "tool_result"] as const) {
    const got = file.factors.perChar[kind];
    assert.ok(Math.abs(got - TRUE_FACTORS.perChar[kind]) / TRUE_FACTORS.perChar[kind] < 0.05, `${kind}: ${got} ≈ ${TRUE_FACTORS.perChar[kind]}`);
  }
});

/** The flushes of every events.jsonl under `out`, as `start-end`, in file order. */
async function flushes(out: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of (await readdir(out, { recursive: true, withFileTypes: true })).filter((e) => e.name === "events.jsonl").sort((a, b) => a.parentPath.localeCompare(b.parentPath))) {
    for (const line of (await readFile(join(entry.parentPath, entry.name), "utf8")).split("\n")) {
      if (line.includes('"type":"flush"')) {
        const e = JSON.parse(line) as { start: number; end: number };
        found.push(`${e.start}-${e.end}`);
      }
    }
  }
  return found;
}

test("a run stopped at its step cap and continued with another --calibration keeps the recorded counter: the same flushes", async (t) => {
  const dir = await tempDir(t);
  const other = { ...TRUE_FACTORS, perChar: { prose: 0.9, code: 0.9, json: 0.9, tool_result: 0.9 } };
  const steps = Array.from({ length: 16 }, (_, k) => `    - call: write_file\n      input: { path: f${k}.txt, content: "${"word ".repeat(300)}${k}" }\n`).join("");
  await writeFiles(dir, {
    "a.json": formatCalibration({ version: 1, fittedFrom: "test", factors: TRUE_FACTORS, fit: null }),
    "b.json": formatCalibration({ version: 1, fittedFrom: "test", factors: other, fit: null }),
    "suite/long.yaml": `prompt: Write the files.\nmodel:\n  provider: scripted\n  script:\n${steps}    - say: done\ntranscript: { budgetTokens: 6000, blockTokens: 600 }\npolicy:\n  default: deny\n  rules:\n    - allow: { tools: [write_file] }\n`,
  });
  const whole = await runCli(["run", "suite", "--out", "whole", "--calibration", "a.json"], { cwd: dir });
  assert.equal(whole.code, 0, whole.stderr);
  const wholeFlushes = await flushes(join(dir, "whole"));
  assert.ok(wholeFlushes.length >= 2, `the run flushes: ${wholeFlushes.join(", ")}`);
  const otherRun = await runCli(["run", "suite", "--out", "other", "--calibration", "b.json"], { cwd: dir });
  assert.equal(otherRun.code, 0, otherRun.stderr);
  assert.notDeepEqual(await flushes(join(dir, "other")), wholeFlushes, "counted with b.json from the start, the flushes move");

  const stopped = await runCli(["run", "suite", "--out", "split", "--calibration", "a.json", "--max-steps", "9"], { cwd: dir });
  assert.equal(stopped.code, 1, stopped.stderr);
  const resumed = await runCli(["run", "suite", "--out", "split", "--calibration", "b.json", "--max-steps", "40"], { cwd: dir });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual(await flushes(join(dir, "split")), wholeFlushes);
});
