/** The beforeExit net's rule (stall-net.ts), with a stand-in for the process: first an empty loop stalls the run, then it gives up; a finished run is left alone. */
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { test } from "node:test";
import { RhemaError } from "../../../src/core/errors.js";
import { STALLED_MESSAGE, installStallNet, untilStalled } from "../../../src/runner/execute/stall-net.js";

function net(finished: () => boolean) {
  const source = new EventEmitter();
  const seen: string[] = [];
  installStallNet(source as unknown as { on(event: "beforeExit", listener: () => void): unknown }, {
    finished,
    stall: (reason) => seen.push(`stall ${reason.code}: ${reason.message}`),
    giveUp: (message) => seen.push(`give up: ${message}`),
  });
  return { fire: () => source.emit("beforeExit"), seen };
}

test("an empty loop with the run unfinished stalls it once (internal), then gives up", () => {
  const { fire, seen } = net(() => false);
  fire();
  assert.deepEqual(seen, [`stall internal: ${STALLED_MESSAGE}`]);
  fire();
  assert.equal(seen.length, 2);
  assert.match(seen[1]!, /^give up: rhema stopped making progress/);
});

test("a finished run's beforeExit is the normal end", () => {
  const { fire, seen } = net(() => true);
  fire();
  fire();
  assert.deepEqual(seen, []);
});

test("untilStalled: the work's value, or 'stalled' once the signal aborts first (also when aborted already)", async () => {
  assert.equal(await untilStalled(Promise.resolve(3), undefined), 3);
  const controller = new AbortController();
  assert.equal(await untilStalled(Promise.resolve(4), controller.signal), 4);
  const never = new Promise<number>(() => {});
  const racing = untilStalled(never, controller.signal);
  controller.abort(new RhemaError("internal", "x"));
  assert.equal(await racing, "stalled");
  assert.equal(await untilStalled(never, controller.signal), "stalled");
});
