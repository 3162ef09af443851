/**
 * The `scripted` provider: plays a script of assistant messages, offline. Task files use it to
 * run suites without a model; tests use it as their one shared fake, since it records every
 * request it receives (as the exact JSON it would have sent).
 *
 * It keeps no conversation state: the step it plays is the number of assistant messages in
 * the request (plus those its summaries stand for, `compactedSteps`), so a resumed or retried
 * conversation gets the same answer at the same point.
 * Usage comes from a prompt-cache simulator fed with the requests it receives, each stamped
 * with the provider's clock (`now`), so pauses between requests let entries expire; its tokens
 * are the token counter's (chars4 unless given one); output tokens are the count of what the step
 * says and calls, plus its `reasoningTokens`.
 * A step's `fail` goes through the shared bounded retry (provider-retry.ts) as an HTTP
 * provider's failure does: a retryable one is tried again with the same policy and notices, so
 * retries can be tested offline.
 */
import { ProviderError, errorMessage } from "../core/errors.js";
import { ZERO_USAGE, type ModelProvider, type ModelRequest, type StreamEvent, type Usage } from "../core/provider.js";
import { chars4Counter, type TokenCounter } from "../core/token-counter.js";
import { PromptCacheSimulator } from "../cache/prompt-cache-simulator.js";
import type { ScriptStep } from "./script.js";
import { streamWithRetry, type RetryOptions } from "./provider-retry.js";

export type { ScriptStep, ScriptedCall } from "./script.js";

export const END_OF_SCRIPT_TEXT = "(end of script)";

export interface ScriptedProviderOptions {
  /** Shown in the provider id: `scripted:NAME`. */
  name?: string;
  /** The cache simulator to report usage from; `false` reports zero usage. */
  cache?: PromptCacheSimulator | false;
  /** The time each request is sent, in ms, for the simulator's TTLs (default `Date.now`). */
  now?: () => number;
  /** Keep every request in `requests` (default true; a long run may turn it off to save memory). */
  record?: boolean;
  /** The retry of a retryable `fail` (default: the HTTP providers' policy, 4 attempts; `maxAttempts: 1` turns it off). */
  retry?: RetryOptions;
  /** Counts the usage it reports: the default simulator's blocks and the output (default chars4). */
  counter?: TokenCounter;
}

export class ScriptedProvider implements ModelProvider {
  readonly id: string;
  /** The registry's `scripted` capability (provider-registry.ts), carried by the provider itself. */
  readonly answersFromScript = true;
  /** Every request received, serialized exactly: retry tests compare these bytes. */
  readonly requests: string[] = [];
  private readonly steps: readonly ScriptStep[];
  private readonly cache: PromptCacheSimulator | false;
  private readonly failuresSoFar = new Map<number, number>();
  private readonly record: boolean;
  private readonly now: () => number;
  private readonly retry: RetryOptions;
  private readonly counter: TokenCounter;

  constructor(steps: readonly ScriptStep[], options: ScriptedProviderOptions = {}) {
    this.steps = steps;
    this.id = `scripted:${options.name ?? "script"}`;
    this.counter = options.counter ?? chars4Counter;
    this.cache = options.cache ?? new PromptCacheSimulator({ counter: this.counter });
    this.record = options.record ?? true;
    this.now = options.now ?? Date.now;
    this.retry = options.retry ?? {};
  }

  /** The requests received, parsed back. */
  parsedRequests(): ModelRequest[] {
    return this.requests.map((r) => JSON.parse(r) as ModelRequest);
  }

  stream(req: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent> {
    return streamWithRetry("scripted", () => this.attempt(req, signal), unexpectedFailure, signal, this.retry);
  }

  /** One attempt: recorded, then failed as the step says or played. */
  private async *attempt(req: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent> {
    if (this.record) this.requests.push(JSON.stringify(req));
    const position = (req.compactedSteps ?? 0) + req.messages.filter((m) => m.role === "assistant").length;
    const step = this.steps[position] ?? { say: END_OF_SCRIPT_TEXT };
    throwIfAborted(signal);
    this.maybeFail(step, position);

    const usage = this.cache ? this.cache.observe(req, this.now()) : ZERO_USAGE;
    const delayMs = step.chunkDelayMs ?? 0;
    let output = "";
    if (step.say !== undefined) {
      for (const chunk of chunksOf(step.say)) {
        await pause(delayMs, signal);
        output += chunk;
        yield { type: "text", delta: chunk };
      }
    }
    const calls = step.calls ?? (step.call !== undefined ? [{ call: step.call, input: step.input }] : []);
    for (const [k, c] of calls.entries()) {
      await pause(delayMs, signal);
      const input = c.input ?? {};
      output += c.call + JSON.stringify(input);
      yield { type: "tool_call", id: `call_${position}_${k}`, name: c.call, input };
    }
    await pause(delayMs, signal);
    yield { type: "usage", usage: withOutput(usage, this.counter.text(output), step.reasoningTokens ?? 0) };
    yield { type: "stop", reason: calls.length > 0 ? "tool_use" : "end_turn" };
  }

  private maybeFail(step: ScriptStep, position: number): void {
    if (!step.fail) return;
    const done = this.failuresSoFar.get(position) ?? 0;
    if (step.fail.times !== undefined && done >= step.fail.times) return;
    this.failuresSoFar.set(position, done + 1);
    throw new ProviderError(step.fail.message ?? `scripted failure at step ${position + 1}`, {
      retryable: step.fail.retryable ?? false,
      status: step.fail.status ?? 500,
    });
  }
}

/** The simulator's input figures with the step's output: what it wrote plus what it reasoned, the reasoning its part. */
function withOutput(input: Usage, writtenTokens: number, reasoningTokens: number): Usage {
  return { ...input, outputTokens: writtenTokens + reasoningTokens, ...(reasoningTokens > 0 ? { reasoningTokens } : {}) };
}

/** What an attempt threw that is not a `ProviderError` (a bug): not retried. */
function unexpectedFailure(err: unknown): ProviderError {
  return new ProviderError(`scripted: ${errorMessage(err)}`, { retryable: false, cause: err });
}

/** Splits text into a few chunks, as a streaming model would send it. */
function chunksOf(text: string): string[] {
  if (text.length <= 16) return [text];
  const size = Math.ceil(text.length / 4);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new ProviderError("request aborted", { retryable: false, cause: signal.reason });
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  throwIfAborted(signal);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ProviderError("request aborted", { retryable: false, cause: signal.reason }));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
