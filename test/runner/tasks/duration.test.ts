import assert from "node:assert/strict";
import { test } from "node:test";
import { formatDurationMs, parseDurationMs, parseLimitMs } from "../../../src/runner/tasks/duration.js";

test("parses task-file durations into milliseconds", () => {
  const inputs: (string | number)[] = ["10m", "90s", "1h", "1500ms", "0.5s", 90, 1.5];
  assert.deepStrictEqual(inputs.map(parseDurationMs), [600_000, 90_000, 3_600_000, 1_500, 500, 90_000, 1_500]);
});

test("refuses what is not a positive duration", () => {
  const inputs: (string | number)[] = ["10", "10 m", "10min", "-5s", "0s", "", "1d", 0, -1, Number.NaN, Number.POSITIVE_INFINITY];
  assert.deepStrictEqual(inputs.map(parseDurationMs), inputs.map(() => null));
});

test("formats durations for people", () => {
  assert.deepStrictEqual(
    [0, 850, 12_345, 59_999, 65_000, 3_599_000, 7_380_000, -5].map(formatDurationMs),
    ["0ms", "850ms", "12.3s", "59.9s", "1m 05s", "59m 59s", "2h 03m", "0ms"],
  );
});

test("limits take none (no limit: Infinity) and any finite duration, however long; a duration past what a number holds is refused", () => {
  assert.equal(parseLimitMs("none"), Infinity);
  assert.equal(parseLimitMs(" none "), Infinity);
  assert.equal(parseLimitMs("1000h"), 3_600_000_000, "above setTimeout's 2^31-1 ms: kept as it is");
  assert.equal(parseLimitMs("10m"), 600_000);
  assert.equal(parseLimitMs(90), 90_000);
  for (const bad of ["None", "0s", "", "never", "-1s", `${"9".repeat(400)}h`]) assert.equal(parseLimitMs(bad), null, bad);
  assert.equal(parseDurationMs("none"), null, "a duration is not a limit: none is only for limits");
  assert.equal(parseDurationMs(`${"9".repeat(400)}h`), null);
});
