/**
 * One compaction step before a request: ask the mirror's strategy whether to flush; if so, have
 * the worker summarize, count its request, and apply the summary. The engine then emits the
 * flush and commits the `flush` boundary, so a resumed run never pays the worker again.
 */
import { BudgetError, type SpentBudget } from "../core/errors.js";
import type { ModelRequest } from "../core/provider.js";
import type { Message } from "../core/messages.js";
import type { ToolSpec } from "../core/tool.js";
import { chars4Counter, type TokenCounter } from "../core/token-counter.js";
import type { CompactionWorker, SummarizeRequest } from "./compaction-worker.js";
import { summaryTargetTokens } from "./elider.js";
import type { FlushPlan } from "./compaction-plan.js";
import type { TranscriptMirror } from "./transcript-mirror.js";

export interface FlushReport {
  plan: FlushPlan;
  /** The log messages the new summary stands for: `[start, end)`. */
  start: number;
  end: number;
  summaryTokens: number;
  worker: CompactionWorker["kind"];
  /** Set when a model worker failed and the elider stood in. */
  fallbackReason?: string;
}

export interface CompactionInput {
  messages: readonly Message[];
  system: string | null;
  tools: ToolSpec[];
  nowMs: number;
  signal: AbortSignal;
  /** Asked before a model worker's request: a spent budget stops the flush before it starts (a `BudgetError`). */
  spentBudget?: () => SpentBudget | null;
}

/** The counted tokens of what every request carries before its messages. */
export function fixedTokensOf(system: string | null, tools: readonly ToolSpec[], counter: TokenCounter = chars4Counter): number {
  return counter.text(system ?? "") + counter.text(JSON.stringify(tools), "json");
}

/**
 * What the worker is asked for `plan`: the messages it flushes (and summaries it merges), the
 * size to aim at, and the request it interrupts as context. Call before `applyFlush`.
 */
export function summarizeRequest(
  mirror: TranscriptMirror,
  plan: FlushPlan,
  log: { messages: readonly Message[]; system: string | null; tools: ToolSpec[]; fixedTokens: number },
): SummarizeRequest {
  const { messages } = log;
  const rawStart = mirror.rawStart();
  const scope = mirror.workerScope(messages, plan); // before view(), which marks anew
  const view = mirror.view(messages, log.fixedTokens);
  const context: ModelRequest = { system: log.system, tools: log.tools, messages: view.messages, cacheBreakpoints: view.cacheBreakpoints };
  const source = mirror.flushSource(messages, plan);
  const covered = source.messages.reduce((n, m) => n + mirror.counter.message(m), 0)
    + source.earlierSummaries.reduce((n, s) => n + mirror.counter.text(s), 0);
  const rawFrom = view.messages.length - (messages.length - rawStart);
  return {
    messages: source.messages, earlierSummaries: source.earlierSummaries,
    targetTokens: summaryTargetTokens(covered, mirror.settings.summarySize), charsPerToken: mirror.counter.charsPerProseToken, context,
    range: { from: plan.mode === "replace" ? 0 : rawFrom, to: rawFrom + (plan.cut - rawStart) },
    scope,
  };
}

export async function compactBeforeRequest(mirror: TranscriptMirror, worker: CompactionWorker, input: CompactionInput): Promise<FlushReport | null> {
  const { messages } = input;
  const fixedTokens = fixedTokensOf(input.system, input.tools, mirror.counter);
  const plan = mirror.planFlush(messages, fixedTokens, input.nowMs);
  if (!plan) return null;
  const spent = worker.kind === "model" ? input.spentBudget?.() ?? null : null;
  if (spent) throw new BudgetError(spent, "worker");
  const rawStart = mirror.rawStart();
  const result = await worker.summarize(summarizeRequest(mirror, plan, { messages, system: input.system, tools: input.tools, fixedTokens }), input.signal);
  if (result.usage) mirror.recordWorker(result.usage);
  mirror.applyFlush(messages, plan, result.summary);
  return {
    plan, start: plan.mode === "replace" ? 0 : rawStart, end: plan.cut,
    summaryTokens: mirror.counter.text(result.summary), worker: worker.kind,
    ...(result.fallbackReason ? { fallbackReason: result.fallbackReason } : {}),
  };
}
