/**
 * The pacer of a run's reports: asks while a write runs are one write after it, of the latest
 * results; the next write waits `spacing` times the last one's length; a failure is thrown by the
 * next ask and by settle. The clock is a fake one the writes advance, so waits are exact.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { ReportPacer } from "../../../src/runner/reports/report-pacer.js";

/** A write that takes `ms` on the fake clock (and a tick of real time), recording what it saw and when it began. */
function fakeWrites(ms: number) {
  let clock = 0;
  const seen: { at: number; value: number }[] = [];
  let value = 0;
  const write = async () => {
    seen.push({ at: clock, value });
    await sleep(1);
    clock += ms;
  };
  return { write, seen, now: () => clock, set: (v: number) => (value = v), advance: (by: number) => (clock += by) };
}

test("asks while a write runs become one write after it, which reads the latest results", async () => {
  const w = fakeWrites(0);
  const pacer = new ReportPacer(w.write, 3, w.now);
  w.set(1);
  pacer.ask();
  w.set(2);
  pacer.ask();
  w.set(3);
  pacer.ask();
  await sleep(20);
  await pacer.settle();
  assert.deepEqual(w.seen.map((s) => s.value), [1, 3]);
});

test("after a write of d ms the next one starts no sooner than spacing × d later", async () => {
  const w = fakeWrites(10);
  const pacer = new ReportPacer(w.write, 3, w.now);
  pacer.ask();
  await sleep(10);
  assert.equal(w.seen.length, 1);
  // The first write ended at 10: the next may start at 10 + 3 × 10 = 40. At 25 it waits (a timer of 15 ms).
  w.advance(15);
  pacer.ask();
  assert.equal(w.seen.length, 1, "not started at once");
  await sleep(40);
  assert.equal(w.seen.length, 2, "started once the wait passed");
  await pacer.settle();
});

test("a failed write is thrown by the next ask and by settle; nothing more is written after it", async () => {
  let writes = 0;
  const pacer = new ReportPacer(async () => {
    writes++;
    throw new Error("ENOSPC: no space left on device, write 'junit.xml'");
  }, 0);
  pacer.ask();
  await sleep(10);
  assert.throws(() => pacer.ask(), /ENOSPC/);
  await assert.rejects(pacer.settle(), /ENOSPC/);
  assert.equal(writes, 1);
});

test("settle cancels a write only scheduled, and waits for one under way", async () => {
  const w = fakeWrites(100);
  const pacer = new ReportPacer(w.write, 3, w.now);
  pacer.ask();
  await pacer.settle();
  assert.equal(w.seen.length, 1, "the write under way finished");
  pacer.ask(); // scheduled 300 ms out on the fake clock
  await pacer.settle();
  await sleep(20);
  assert.equal(w.seen.length, 1, "the scheduled one never ran");
});
