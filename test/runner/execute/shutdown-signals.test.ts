import { test } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { installShutdownSignals, signalAction, type ShutdownSignal } from "../../../src/runner/execute/shutdown-signals.js";

function recorder() {
  const source = new EventEmitter();
  const calls: string[] = [];
  installShutdownSignals(source, {
    shutdown: (signal) => calls.push(`shutdown ${signal}`),
    note: (message) => calls.push(`note ${message.split(":")[0]}`),
    force: (signal) => calls.push(`force ${signal}`),
  });
  const send = (signal: ShutdownSignal) => source.emit(signal, signal);
  return { source, calls, send };
}

test("the first signal shuts down, the second is only noted, the third forces the exit", () => {
  assert.deepEqual([1, 2, 3, 4].map(signalAction), ["shutdown", "ignore", "force", "force"]);
});

test("GitHub's cancel (SIGINT, then SIGTERM) shuts down once and never forces", () => {
  const { calls, send } = recorder();
  send("SIGINT");
  send("SIGTERM");
  assert.deepEqual(calls, ["note SIGINT", "shutdown SIGINT", "note SIGTERM during shutdown"]);
});

test("SIGINT and SIGTERM are counted together; the third of either forces", () => {
  const { calls, send } = recorder();
  send("SIGTERM");
  send("SIGTERM");
  send("SIGINT");
  assert.deepEqual(calls, ["note SIGTERM", "shutdown SIGTERM", "note SIGTERM during shutdown", "note SIGINT again", "force SIGINT"]);
});

test("each signal has two listeners, so signal-exit never counts ours as none and re-raises", () => {
  const { source } = recorder();
  assert.deepEqual([source.listenerCount("SIGINT"), source.listenerCount("SIGTERM")], [2, 2]);
});
