import { test } from "node:test";
import assert from "node:assert/strict";
import { calibratedCounter, chars4Counter } from "../../src/core/token-counter.js";
import { evaluateFactors, fitCalibration, nnls } from "../../src/tokens/calibration-fit.js";
import { loadTokenizerCounter } from "../../src/tokens/tokenizer-counter.js";
import { CalibrationFileError, calibrationId, formatCalibration, parseCalibration } from "../../src/tokens/calibration-file.js";
import { billedFixture } from "../support/calibration-fixture.js";

test("non-negative least squares solves an exact system and clamps a negative weight to 0", () => {
  const rows = [[1, 0], [0, 1], [1, 1], [2, 1]];
  assert.deepEqual(nnls(rows, rows.map(([a, b]) => 3 * a! + 0.5 * b!)).map((v) => Number(v.toFixed(6))), [3, 0.5]);
  assert.deepEqual(nnls([[1, 0], [0, 1]], [2, -5]).map((v) => Number(v.toFixed(6))), [2, 0]);
});

test("the fit recovers the factors that made the bills, each session's hidden prefix taken from its first request", () => {
  const truth = calibratedCounter("calibrated:truth", { perChar: { prose: 0.26, code: 0.4, json: 0.35, tool_result: 0.33 }, perMessage: 3, perToolBlock: 5 });
  const fit = fitCalibration(billedFixture(truth));
  for (const [kind, want] of Object.entries({ prose: 0.26, code: 0.4, json: 0.35, tool_result: 0.33 })) {
    assert.ok(Math.abs(fit.factors.perChar[kind as "prose"] - want) < 0.01, `${kind}: ${fit.factors.perChar[kind as "prose"]} ≈ ${want}`);
  }
  assert.ok(Math.abs(fit.fitted.aggregateErrorPct) < 0.2, `aggregate ${fit.fitted.aggregateErrorPct} %`);
  assert.equal(fit.sessions, 8);
  assert.equal(fit.heldOut?.folds, 5);
});

test("fitted on a real tokenizer's bills, the calibrated counter's error is reported on the requests fitted and on held-out sessions", async () => {
  const o200k = await loadTokenizerCounter("o200k_base");
  const samples = billedFixture(o200k);
  const fit = fitCalibration(samples);
  const chars4 = evaluateFactors(samples, { perChar: { prose: 0.25, code: 0.25, json: 0.25, tool_result: 0.25 }, perMessage: 4, perToolBlock: 4 });
  console.log(`# fit: aggregate ${fit.fitted.aggregateErrorPct.toFixed(2)} %, mean ${fit.fitted.meanRequestErrorPct.toFixed(2)} %; held-out (${fit.heldOut!.folds}-fold): aggregate ${fit.heldOut!.aggregateErrorPct.toFixed(2)} %, mean ${fit.heldOut!.meanRequestErrorPct.toFixed(2)} %; chars/4: aggregate ${chars4.aggregateErrorPct.toFixed(2)} %`);
  assert.equal(fit.fitted.requests, samples.length - 8, "each session's first request is left out");
  assert.ok(Math.abs(fit.fitted.aggregateErrorPct) < 2, `fitted aggregate ${fit.fitted.aggregateErrorPct} %`);
  assert.ok(Math.abs(fit.heldOut!.aggregateErrorPct) < 3, `held-out aggregate ${fit.heldOut!.aggregateErrorPct} %`);
  assert.ok(fit.heldOut!.meanRequestErrorPct < 3, `held-out mean ${fit.heldOut!.meanRequestErrorPct} %`);
  assert.ok(fit.fitted.meanRequestErrorPct < Math.abs(chars4.meanRequestErrorPct), "the fit beats chars/4 on the bills it was fitted on");
});

test("a fit needs a session with two requests, and says so", () => {
  const [one] = billedFixture(chars4Counter, 1, 1);
  assert.throws(() => fitCalibration([one!]), /no session has two requests/);
});

test("a calibration file's id is the hash of its factors: a wrong id, a bad field and a future version are errors naming the field", () => {
  const factors = { perChar: { prose: 0.26, code: 0.4, json: 0.35, tool_result: 0.33 }, perMessage: 3, perToolBlock: 5 };
  const text = formatCalibration({ version: 1, fittedFrom: "test", factors, fit: null });
  const file = parseCalibration(text, "c.json");
  assert.equal(file.id, calibrationId(factors));
  assert.match(file.id!, /^calibrated:[0-9a-f]{16}$/);
  assert.equal(parseCalibration(text.replace('"fittedFrom": "test"', '"fittedFrom": "edited note"'), "c.json").id, file.id, "a note does not change the id");
  assert.throws(() => parseCalibration(text.replace('"perMessage": 3', '"perMessage": 4'), "c.json"), (err: unknown) => err instanceof CalibrationFileError && /field "id": .* is not the hash of these factors/.test(err.message));
  assert.throws(() => parseCalibration(text.replace('"code": 0.4', '"code": -1'), "c.json"), /c\.json: field "factors\.perChar\.code"/);
  assert.throws(() => parseCalibration(text.replace('"version": 1', '"version": 2'), "c.json"), /field "version": expected 1, got 2/);
});

test("a bounded fit keeps each factor where its bounds say: a value no tokenizer has is clamped, one inside them is found exactly", () => {
  assert.deepEqual(nnls([[1, 0], [0, 1]], [2, 50], [[0, 1], [0, 40]]).map((v) => Number(v.toFixed(6))), [1, 40]);
  assert.deepEqual(nnls([[1, 0], [0, 1]], [0.5, 30], [[0, 1], [0, 40]]).map((v) => Number(v.toFixed(6))), [0.5, 30]);
  assert.deepEqual(nnls([[1, 0], [0, 1]], [0.1, 3], [[0.2, 1], [0, 40]]).map((v) => Number(v.toFixed(6))), [0.2, 3]);
});
