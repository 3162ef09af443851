import { test } from "node:test";
import assert from "node:assert/strict";
import { chars4Counter } from "../../src/core/token-counter.js";
import { PROVIDER_NAMES, providerEntry } from "../../src/providers/provider-registry.js";
import { calibrationId } from "../../src/tokens/calibration-file.js";
import { chooseCounter, loadRecordedCounter } from "../../src/tokens/counter-choice.js";
import { ANTHROPIC_CALIBRATION } from "../../src/tokens/default-calibrations.js";
import { join } from "node:path";
import { loadReplayInputs } from "../../src/cli/replay-inputs.js";
import { evaluateFactors, fitCalibration } from "../../src/tokens/calibration-fit.js";
import { billedSamples } from "../../src/transcript/import/billed-samples.js";
import { repoRoot } from "../support/paths.js";

test("each provider's models count as the registry says: OpenAI's tokenizer (both its APIs), Anthropic's shipped calibration (on Bedrock and Vertex too), Gemini and scripted chars4", async () => {
  // A recording (`cassette`) is planned as the model it recorded, and counts as that one does.
  const chosen = await Promise.all(PROVIDER_NAMES.filter((name) => !providerEntry(name).capabilities.replays).map(async (name) => [name, (await chooseCounter(providerEntry(name).tokenCounting, name === "scripted" ? null : name.startsWith("openai") ? "gpt-4.1-mini" : "claude-haiku-4-5")).id]));
  const anthropic = calibrationId(ANTHROPIC_CALIBRATION.factors);
  assert.deepEqual(Object.fromEntries(chosen), {
    scripted: "chars4", anthropic, openai: "o200k_base", "openai-responses": "o200k_base", gemini: "chars4", "anthropic-bedrock": anthropic, "anthropic-vertex": anthropic,
  });
  assert.equal((await chooseCounter("tokenizer", "llama-3.1-8b")).id, "chars4", "a compatible server's model with no known encoding");
});

test("a calibration given replaces the choice for every provider; a recorded counter is made again as recorded", async () => {
  const factors = { perChar: { prose: 0.3, code: 0.4, json: 0.35, tool_result: 0.33 }, perMessage: 3, perToolBlock: 2 };
  const file = { version: 1 as const, fittedFrom: "test", factors, fit: null };
  for (const counting of ["tokenizer", "calibration", "chars4"] as const) assert.equal((await chooseCounter(counting, "gpt-4o", file)).id, calibrationId(factors));
  assert.equal(await loadRecordedCounter({ kind: "chars4" }), chars4Counter);
  assert.equal((await loadRecordedCounter({ kind: "tokenizer", encoding: "cl100k_base" })).id, "cl100k_base");
  assert.equal((await loadRecordedCounter({ kind: "calibrated", id: calibrationId(factors), factors })).id, calibrationId(factors));
});

test("the shipped Anthropic calibration is what bench calibrate fits from the repository's real Claude Code logs", async () => {
  const { read } = await loadReplayInputs([join(repoRoot, "bench/corpus/real/claude-code")], false, 0);
  const samples = read.flatMap((input) => input.sessions.flatMap((session) => billedSamples(session)
    .filter((b) => b.model?.startsWith("claude-"))
    .map((b) => ({ session: `${input.name}#${session.name}`, system: b.system, tools: b.tools, messages: b.messages, billed: b.billed }))));
  const fit = fitCalibration(samples);
  assert.deepEqual(fit.factors, ANTHROPIC_CALIBRATION.factors);
  assert.deepEqual({ sessions: fit.sessions, fitted: fit.fitted, heldOut: fit.heldOut, unfitted: fit.unfitted }, ANTHROPIC_CALIBRATION.fit);
  // It counts what Claude bills better than four characters a token, on sessions it was not fitted on too.
  const chars4 = evaluateFactors(samples, { perChar: { prose: 0.25, code: 0.25, json: 0.25, tool_result: 0.25 }, perMessage: 4, perToolBlock: 4 });
  assert.ok(fit.heldOut!.meanRequestErrorPct < chars4.meanRequestErrorPct, `${fit.heldOut!.meanRequestErrorPct} vs chars/4 ${chars4.meanRequestErrorPct}`);
});
