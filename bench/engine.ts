/**
 * bench/engine: the engine's own cost, run on demand (`npm run bench:engine`), printing figures.
 *
 * 1. A 300-step turn against a zero-latency scripted provider, with 8 KB tool outputs and the
 *    checkpoint store as commit hook writing to disk. Time inside the provider, the tool and
 *    the hook is measured and taken out: what is left is the engine's time per step.
 *    Target: ≤ 1 ms per step.
 *    Every call has four boundaries' worth of commits (intent, started, result; input once).
 * 2. Checkpoint cost per boundary with 40 KB and with 4 MB of history already committed, each
 *    record numbered and the counter file rewritten and fsync'd after it (journal integrity).
 *    Target: the 4 MB cost ≤ 2× the 40 KB cost.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { CodingAgent } from "../src/agent.js";
import { allowAll } from "../src/core/approval.js";
import { CheckpointStore } from "../src/store/checkpoint-store.js";
import { nullSink } from "../src/core/events.js";
import type { Message } from "../src/core/messages.js";
import type { ModelProvider, ModelRequest, StreamEvent } from "../src/core/provider.js";
import { newSession } from "../src/core/session.js";
import type { Tool } from "../src/core/tool.js";
import { emptyTranscriptStats } from "../src/core/transcript-types.js";
import { ScriptedProvider, type ScriptStep } from "../src/providers/scripted.js";

const STEPS = 300;
const OUTPUT_BYTES = 8 * 1024;
const timers = { provider: 0, tool: 0, hook: 0, commits: 0 };

/** Wraps a provider so the time spent producing its events is counted apart. */
function timedProvider(inner: ModelProvider): ModelProvider {
  return {
    id: inner.id,
    async *stream(req: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent> {
      const it = inner.stream(req, signal)[Symbol.asyncIterator]();
      for (;;) {
        const t0 = performance.now();
        const next = await it.next();
        timers.provider += performance.now() - t0;
        if (next.done) return;
        yield next.value;
      }
    },
  };
}

const output = "o".repeat(OUTPUT_BYTES - 1) + "\n";
const echoTool: Tool = {
  spec: { name: "echo", description: "Returns 8 KB.", inputSchema: { type: "object" } },
  effect: "read",
  async run() {
    const t0 = performance.now();
    const result = { content: output };
    timers.tool += performance.now() - t0;
    return result;
  },
};

async function benchTurn(dir: string): Promise<void> {
  const workspace = await mkdtemp(join(dir, "ws-"));
  const steps: ScriptStep[] = [...Array.from({ length: STEPS - 1 }, (_, k) => ({ say: `step ${k}`, call: "echo", input: { k } })), { say: "done" }];
  // The simulator is the provider's own cost: leave it off so the figure is the engine's.
  const provider = timedProvider(new ScriptedProvider(steps, { cache: false }));
  // A budget above the turn's history: a flush would drop assistant messages from the view, and
  // the scripted provider picks its step by counting them (the turn would replay its script).
  const agent = new CodingAgent(provider, {
    workspace, builtinTools: false, tools: [echoTool], maxTurnSteps: STEPS + 1, transcript: { budgetTokens: 5_000_000 },
  });
  const store = new CheckpointStore(join(dir, "turn-checkpoint"));
  agent.setCommitHook(async (c) => {
    const t0 = performance.now();
    await store.hook(c);
    timers.hook += performance.now() - t0;
    timers.commits += 1;
  });
  const t0 = performance.now();
  const out = await agent.turn("go", nullSink, allowAll);
  const total = performance.now() - t0;
  await store.close();
  const engine = total - timers.provider - timers.tool - timers.hook;
  const historyBytes = JSON.stringify(agent.session.messages).length;
  console.log(`turn: ${out.steps} steps, ${(historyBytes / 1e6).toFixed(2)} MB history, ${total.toFixed(0)} ms in all`);
  console.log(`  provider ${timers.provider.toFixed(0)} ms, tools ${timers.tool.toFixed(1)} ms, commit hook ${timers.hook.toFixed(0)} ms (${timers.commits} boundaries, ${(timers.hook / timers.commits).toFixed(3)} ms each)`);
  console.log(`  engine time per step: ${(engine / out.steps).toFixed(3)} ms (target ≤ 1 ms)`);
}

/** Mean cost of `boundaries` commits, each adding an 8 KB message, on top of `historyBytes`. */
async function benchCheckpoint(dir: string, historyBytes: number, boundaries: number): Promise<number> {
  const store = new CheckpointStore(join(dir, `cp-${historyBytes}`));
  const session = newSession("bench", new Date());
  const message = (k: number): Message => ({ role: k % 2 ? "assistant" : "user", content: [{ type: "text", text: `${k} ${output}` }] });
  let k = 0;
  while (JSON.stringify(session.messages).length < historyBytes) session.messages.push(message(k++));
  const stats = emptyTranscriptStats(8000);
  await store.commit({ boundary: "input", session, sections: [], stats }); // the first commit writes the snapshot
  const t0 = performance.now();
  for (let i = 0; i < boundaries; i++) {
    session.messages.push(message(k++));
    await store.commit({ boundary: "result", session, sections: [], stats });
  }
  const perBoundary = (performance.now() - t0) / boundaries;
  await store.close();
  return perBoundary;
}

const dir = await mkdtemp(join(tmpdir(), "rhema-bench-engine-"));
try {
  await benchTurn(dir);
  const boundaries = 400;
  const small = await benchCheckpoint(dir, 40 * 1024, boundaries);
  const large = await benchCheckpoint(dir, 4 * 1024 * 1024, boundaries);
  console.log(`checkpoint per boundary (${boundaries} boundaries of 8 KB, folds included):`);
  console.log(`  at 40 KB history: ${small.toFixed(3)} ms`);
  console.log(`  at 4 MB history:  ${large.toFixed(3)} ms  (ratio ${(large / small).toFixed(2)}×, target ≤ 2×)`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
