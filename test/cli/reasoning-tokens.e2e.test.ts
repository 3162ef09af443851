/**
 * Reasoning tokens through the built CLI: a scripted model that reasons before its messages
 * (`reasoningTokens` on its steps) shows them in events.jsonl, result.json, stats.json (per trial
 * and in the totals), the JUnit properties and the summary — always as a part of the output
 * tokens, never on top — and a task whose model does not reason reads 0.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseStatsReport } from "../../src/runner/reports/stats-report.js";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const task = (reasoning: [number, number] | null) => `prompt: Append a tag.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - call: shell
      input: { command: "echo t >> tags.txt" }
${reasoning ? `      reasoningTokens: ${reasoning[0]}\n` : ""}    - say: done
${reasoning ? `      reasoningTokens: ${reasoning[1]}\n` : ""}checks:
  - { name: ok, run: "true" }
`;

test("a model's reasoning tokens are in every report, a part of its output tokens, and the totals add up", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/thinks.yaml": task([500, 120]), "suite/plain.yaml": task(null) });
  const out = join(root, "run");
  const run = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(run.code, 0, run.stderr);
  const results = Object.fromEntries((await readRunResults(out)).map((r) => [r.id, r]));

  // Each request's usage event: the step's reasoning, within its output.
  const usages = (await readFile(join(out, results.thinks!.transcriptPath), "utf8")).trim().split("\n")
    .map((line) => JSON.parse(line)).filter((e) => e.type === "usage").map((e) => e.usage as { outputTokens: number; reasoningTokens?: number });
  assert.deepEqual(usages.map((u) => u.reasoningTokens), [500, 120]);
  assert.ok(usages.every((u) => u.outputTokens > u.reasoningTokens!), JSON.stringify(usages));
  const thinks = results.thinks!.stats!;
  const plain = results.plain!.stats!;
  assert.deepEqual({ output: thinks.outputTokens, reasoning: thinks.reasoningTokens }, { output: usages[0]!.outputTokens + usages[1]!.outputTokens, reasoning: 620 });
  // The same script without reasoning wrote the same visible output: reasoning is the whole difference.
  assert.deepEqual({ output: plain.outputTokens, reasoning: plain.reasoningTokens }, { output: thinks.outputTokens - 620, reasoning: 0 });

  const stats = parseStatsReport(await readFile(join(out, "stats.json"), "utf8"));
  const row = (id: string) => stats.tasks.find((entry) => entry.id === id)!.stats!;
  assert.deepEqual([row("thinks").reasoningTokens, row("plain").reasoningTokens], [620, 0]);
  const total = { output: thinks.outputTokens + plain.outputTokens, reasoning: 620 };
  assert.deepEqual({ output: stats.total.stats!.outputTokens, reasoning: stats.total.stats!.reasoningTokens }, total);
  assert.deepEqual({ output: stats.suites[0]!.stats!.outputTokens, reasoning: stats.suites[0]!.stats!.reasoningTokens }, total);

  const xml = await readFile(join(out, "junit.xml"), "utf8");
  assert.match(xml, /<property name="suite\.reasoningTokens" value="620"\/>/);
  assert.match(xml, new RegExp(`<property name="suite\\.outputTokens" value="${total.output}"/>`));
  assert.match(xml, /<property name="task\.thinks\.reasoningTokens" value="620"\/>/);
  assert.match(xml, /<property name="task\.plain\.reasoningTokens" value="0"\/>/);
  assert.match(xml, /\[\[PROPERTY\|reasoningTokens=620\]\]/);

  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.ok(summary.includes(` tokens (${total.output} output, 620 of them reasoning) · `), summary);
});
