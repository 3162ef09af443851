/**
 * The step loop: one turn, step by step, durable at every boundary.
 *
 * Vocabulary: a *turn* is one input until the model stops asking for tools; a *step* is one
 * model request plus the tool calls it asked for; a *boundary* is a point where the session
 * is committed (input pushed, assistant message complete = the intent, each call started,
 * each tool result).
 *
 * A call's states, recorded in `session.calls` (call-states.ts): `pending` with the intent (never
 * ran: a resume runs it) → `started` (approved, about to run; for the shell with its held process
 * group) → `completed` or `error` with its result (a denial keeps its `Denial` there, as data: the
 * model reads only the result text). A reply cut at the output limit runs none of its calls.
 *
 * A tool that throws gives the model the failure as its result, except when the machine ran out
 * of file handles, processes or memory (`machineLimitOf`: EMFILE, EAGAIN, …): that is no answer
 * to the model's call, so the turn fails with a `MachineLimitError` and the call stays unanswered
 * in the session (a resume runs it, or closes it as interrupted if it had started).
 *
 * A step that called a tool that ends turns (`Tool.endsTurn`, a structured answer's
 * `final_answer`) ends the turn once its calls are answered, whatever their results: the driver
 * reads the outcome off the session.
 *
 * The loop owns no state between turns: the caller hands it the session and the ports, and
 * it edits `session.messages` in place, committing after each edit.
 */
import { denialOf, denialText, type Approval, type Decision, type Denial } from "./approval.js";
import { callStateOf, recordAnswer, recordPending, recordStarted } from "./call-states.js";
import type { Boundary } from "./commit-hook.js";
import { CUT_REPLY_RESULT, pushToolResult, pushUserContent } from "./conversation.js";
import { BudgetError, CancelledError, CodingAgentError, ProviderError, RhemaError, ToolError, errorMessage, throwIfMachineLimit, type SpentBudget } from "./errors.js";
import type { EventSink } from "./events.js";
import { toolCallsOf, type ContentBlock, type Message, type ToolCallBlock, type ToolResultBlock } from "./messages.js";
import { addUsage, ZERO_USAGE, type ModelProvider, type ModelRequest, type RequestPrice, type StopReason, type Usage } from "./provider.js";
import type { Session, WorkspaceFingerprint } from "./session.js";
import type { ProcessStart, Tool, ToolContext, ToolPlan } from "./tool.js";
import type { ToolInputChecks } from "./tool-input/tool-input-check.js";
import { counted } from "./counted.js";

export interface ModelOutput {
  /** The final assistant message of the turn. */
  message: Message;
  stopReason: StopReason;
  /** The turn's usage, summed over its requests. */
  usage: Usage;
  steps: number;
}

export interface StepLoopPorts {
  session: Session;
  provider: ModelProvider;
  tools: ReadonlyMap<string, Tool>;
  /** The tools' compiled input schemas: every call is checked here before its tool sees it. */
  inputChecks: ToolInputChecks;
  approval: Approval;
  sink: EventSink;
  signal: AbortSignal;
  /** Makes the session durable at a boundary (runs the commit hook). */
  commit(boundary: Boundary): Promise<void>;
  /**
   * Builds the next request from the session as it stands; it may compact old messages first
   * (and commit the `flush` boundary) — `step` is for the events it emits.
   */
  buildRequest(step: number): Promise<ModelRequest>;
  /** Called with each request's usage, before the intent is committed; returns its price (null: not priced). */
  recordUsage(usage: Usage, req: ModelRequest): RequestPrice | null;
  /**
   * Asked before each model request, once the request is built: a budget that is spent, and
   * the turn stops there with a `BudgetError`, nothing of the step begun.
   */
  spentBudget?: () => SpentBudget | null;
  /** Steering nudges queued since the last boundary. */
  takeSteers(): string[];
  toolContext: Omit<ToolContext, "signal">;
  maxTurnSteps: number;
  /** Rewrites tool output text before the model (and the session) sees it, e.g. to redact secrets. */
  filterToolOutput?: (text: string) => string;
  /** The clock of `started` records. */
  now: () => Date;
  /**
   * Takes the workspace fingerprint kept with a write or exec call's `started` record (begun
   * while the approval is asked, awaited before the call starts). A failure leaves it out.
   * `paths`: a write tool's planned paths, the only ones it covers; absent: the whole workspace.
   */
  fingerprint?: (signal: AbortSignal, paths?: readonly string[]) => Promise<WorkspaceFingerprint>;
}

export const DEFAULT_MAX_TURN_STEPS = 50;
const RESULT_PREVIEW_CHARS = 200;
const NOT_RUN_CANCELLED = "not run: the turn was cancelled before this call started";
const CANCELLED_WHILE_RUNNING = "cancelled: the turn was cancelled while this call ran; it may have partly completed";

export async function runSteps(ports: StepLoopPorts): Promise<ModelOutput> {
  let usage: Usage = ZERO_USAGE;
  for (let step = 1; ; step++) {
    throwIfCancelled(ports.signal);
    await pushSteers(ports);
    if (step > ports.maxTurnSteps) {
      throw new CodingAgentError(
        "step_cap",
        `the turn reached its cap of ${counted(ports.maxTurnSteps, "step")} without finishing; the session is committed at its last boundary and can be resumed`,
      );
    }
    const { message: streamed, stopReason, usage: stepUsage } = await requestStep(ports, step);
    usage = addUsage(usage, stepUsage);
    ports.session.messages.push(streamed);
    const at = ports.session.messages.length - 1;
    // A reply cut at the output limit: its calls are answered in the same commit as the intent,
    // so no resume can run one of them either.
    const cut = stopReason === "max_tokens" && toolCallsOf(streamed).length > 0;
    recordPending(ports.session, toolCallsOf(streamed));
    if (cut) for (const call of toolCallsOf(streamed)) appendResult(ports, { result: errorResultOf(call, CUT_REPLY_RESULT) });
    await ports.commit("intent");
    // The message as committed (the commit may rewrite its text, e.g. to redact a secret): the
    // calls run as a resume would run them, and the turn returns what the session holds.
    const message = ports.session.messages[at]!;
    const calls = toolCallsOf(message);
    await ports.sink.emit({ type: "step_end", step, stopReason });

    if (calls.length === 0) {
      await ports.sink.emit({ type: "turn_end", steps: step, stopReason, usage });
      return { message, stopReason, usage, steps: step };
    }
    if (cut) {
      for (const call of calls) await emitResult(ports, step, call, errorResultOf(call, CUT_REPLY_RESULT), Date.now());
    } else {
      await runCalls(ports, step, calls);
      if (calls.some((call) => ports.tools.get(call.name)?.endsTurn === true)) {
        await ports.sink.emit({ type: "turn_end", steps: step, stopReason, usage });
        return { message, stopReason, usage, steps: step };
      }
    }
  }
}

/**
 * Runs the calls a resume found in the intent with no `started` record: they never ran, so
 * they are approved and run now, as if no kill had happened (`step` 0 in their events).
 */
export function runUnstartedCalls(ports: StepLoopPorts, calls: ToolCallBlock[]): Promise<void> {
  return runCalls(ports, 0, calls);
}

function errorResultOf(call: ToolCallBlock, text: string): ToolResultBlock {
  return { type: "tool_result", callId: call.id, content: text, isError: true };
}

async function pushSteers(ports: StepLoopPorts): Promise<void> {
  const steers = ports.takeSteers();
  if (steers.length === 0) return;
  pushUserContent(ports.session.messages, steers.map((text): ContentBlock => ({ type: "text", text })));
  for (const text of steers) await ports.sink.emit({ type: "steer", text });
  await ports.commit("input");
}

/** One model request, streamed into an assistant message (not yet committed). */
async function requestStep(ports: StepLoopPorts, step: number) {
  const req = await ports.buildRequest(step);
  const spent = ports.spentBudget?.() ?? null;
  if (spent) throw new BudgetError(spent, "task");
  await ports.sink.emit({ type: "request", step, messages: req.messages.length });
  const content: ContentBlock[] = [];
  let usage: Usage = ZERO_USAGE;
  let stopReason: StopReason | undefined;
  try {
    for await (const event of ports.provider.stream(req, ports.signal)) {
      switch (event.type) {
        case "text": {
          const last = content[content.length - 1];
          if (last?.type === "text") last.text += event.delta;
          else content.push({ type: "text", text: event.delta });
          await ports.sink.emit({ type: "text", step, delta: event.delta });
          break;
        }
        case "tool_call":
          checkToolCall(event, content);
          content.push({ type: "tool_call", id: event.id, name: event.name, input: event.input });
          await ports.sink.emit({ type: "tool_call", step, callId: event.id, name: event.name, input: event.input });
          break;
        case "reasoning":
          content.push({ type: "reasoning", provider: event.provider, id: event.id, data: event.data, summary: event.summary });
          break;
        case "usage":
          usage = event.usage;
          break;
        case "stop":
          stopReason = event.reason;
          break;
      }
    }
  } catch (err) {
    throwIfCancelled(ports.signal, err);
    if (err instanceof RhemaError) throw err;
    throwIfMachineLimit(err);
    // Providers say their failures as ProviderError. Anything else thrown here — by a provider
    // or by this loop's own sink — is a bug: `internal`, never an outage that --retry-errored reruns.
    throw new RhemaError("internal", `the model request failed: ${errorMessage(err)}`, { cause: err });
  }
  throwIfCancelled(ports.signal);
  if (stopReason === undefined) {
    throw new ProviderError("the model's stream ended without a stop event", { retryable: true, code: "provider_stream" });
  }
  const price = ports.recordUsage(usage, req);
  await ports.sink.emit({ type: "usage", step, usage, ...(price ? { costUsd: price.priced ? price.usd : null } : {}) });
  return { message: { role: "assistant" as const, content }, stopReason, usage };
}

function checkToolCall(event: { id: string; name: string }, content: ContentBlock[]): void {
  if (!event.id || !event.name) {
    throw new ProviderError("the model's stream sent a tool call without an id or name", { retryable: true, code: "provider_stream" });
  }
  if (content.some((b) => b.type === "tool_call" && b.id === event.id)) {
    throw new ProviderError(`the model's stream sent tool call id ${event.id} twice`, { retryable: true, code: "provider_stream" });
  }
}

/** Runs one step's calls in order, committing each result; on cancel, closes the rest. */
async function runCalls(ports: StepLoopPorts, step: number, calls: ToolCallBlock[]): Promise<void> {
  for (const [k, call] of calls.entries()) {
    // A cancel that lands after the last call's result is caught by the loop's own check.
    if (ports.signal.aborted) return closeCancelled(ports, calls.slice(k));
    const started = Date.now();
    let answer: CallAnswer;
    try {
      answer = await runOneCall(ports, step, call);
    } catch (err) {
      if (!ports.signal.aborted) throw err;
      return closeCancelled(ports, calls.slice(k), err);
    }
    appendResult(ports, answer);
    await emitResult(ports, step, call, answer.result, started);
    await ports.commit("result");
  }
}

/** A call's result, and the denial when the approval denied it. */
interface CallAnswer {
  result: ToolResultBlock;
  denial?: Denial;
}

/** Appends a call's result and records its state (completed or error): the call is answered. */
function appendResult(ports: Pick<StepLoopPorts, "session" | "now">, { result, denial }: CallAnswer): void {
  pushToolResult(ports.session.messages, result);
  recordAnswer(ports.session, result, ports.now(), denial);
}

function emitResult(ports: StepLoopPorts, step: number, call: ToolCallBlock, result: ToolResultBlock, startedMs: number) {
  return ports.sink.emit({
    type: "tool_result", step, callId: call.id, name: call.name, isError: result.isError === true,
    durationMs: Date.now() - startedMs, preview: previewOf(result),
  });
}

/** Answers the calls a cancel left unstarted, committing each, then ends the turn cancelled. */
async function closeCancelled(ports: StepLoopPorts, calls: ToolCallBlock[], cause?: unknown): Promise<never> {
  for (const call of calls) {
    const started = callStateOf(ports.session, call.id).state === "started";
    appendResult(ports, { result: errorResultOf(call, started ? CANCELLED_WHILE_RUNNING : NOT_RUN_CANCELLED) });
    await ports.commit("result");
  }
  throw cancelledError(ports.signal, cause);
}

async function runOneCall(ports: StepLoopPorts, step: number, call: ToolCallBlock): Promise<CallAnswer> {
  const errorResult = (text: string): CallAnswer => ({ result: errorResultOf(call, text) });
  const prepared = await prepareCall(ports, call);
  if (typeof prepared === "string") return errorResult(prepared);
  const { tool, input } = prepared;
  // Taken while the approval is asked: nothing changes the workspace until the call starts.
  const fingerprint = tool.effect !== "read" && ports.fingerprint ? ports.fingerprint(ports.signal, fingerprintScope(prepared)).catch(() => undefined) : undefined;
  const decision = await decide(ports, call, prepared);
  await ports.sink.emit({ type: "approval", step, callId: call.id, name: call.name, decision });
  if (decision.decision === "deny") {
    return { result: errorResultOf(call, denialText(decision)), denial: denialOf(decision) };
  }
  const before = await fingerprint;
  throwIfCancelled(ports.signal);
  const start = startCommitter(ports, call, before);
  const ctx: ToolContext = tool.reportsStart ? { ...prepared.ctx, onStarted: start.commit } : prepared.ctx;
  if (!tool.reportsStart) await start.commit();
  try {
    const result = await tool.run(input, ctx);
    start.rethrow();
    const content = toResultContent(result.content, ports.filterToolOutput ?? ((text) => text));
    return { result: { type: "tool_result", callId: call.id, content, ...(result.isError ? { isError: true } : {}) } };
  } catch (err) {
    start.rethrow();
    if (ports.signal.aborted) return errorResult(CANCELLED_WHILE_RUNNING);
    throwIfMachineLimit(err);
    // A command's sandbox that did not start is the machine's failure, not the model's to work round: it ends the turn.
    if (err instanceof RhemaError && err.code === "sandbox_failed") throw err;
    // An MCP server that crashed again after its one restart ends the turn the same way.
    if (err instanceof RhemaError && err.code === "mcp_crashed") throw err;
    return errorResult(failureText(call, err));
  }
}

/**
 * Commits a call's `started` boundary, once: the call's state becomes `started`. A commit
 * that fails inside a tool's `onStarted` fails the turn, not just the call (`rethrow`).
 */
function startCommitter(ports: StepLoopPorts, call: ToolCallBlock, fingerprint: WorkspaceFingerprint | undefined) {
  let done = false;
  let failure: { err: unknown } | null = null;
  return {
    async commit(proc?: ProcessStart): Promise<void> {
      if (done) return;
      done = true;
      recordStarted(ports.session, call.id, { at: ports.now().toISOString(), ...proc, ...(fingerprint ? { fingerprint } : {}) });
      try {
        await ports.commit("started");
      } catch (err) {
        failure = { err };
        throw err;
      }
    },
    rethrow(): void {
      if (failure) throw failure.err;
    },
  };
}

interface PreparedCall { tool: Tool; input: unknown; ctx: ToolContext; plan: ToolPlan }

/** What a call's fingerprint covers: a write tool's planned paths (ToolPlan says so); undefined, the whole workspace. */
function fingerprintScope({ tool, plan }: PreparedCall): readonly string[] | undefined {
  return tool.effect === "write" && plan.paths.length > 0 && !plan.paths.includes(".") ? plan.paths : undefined;
}

/**
 * The call's tool, its input checked against the tool's schema, and its plan; or the error
 * text the model reads instead (an unknown tool, input that does not match, a path outside).
 */
async function prepareCall(ports: StepLoopPorts, call: ToolCallBlock): Promise<PreparedCall | string> {
  const tool = ports.tools.get(call.name);
  if (!tool) {
    const names = [...ports.tools.keys()].join(", ");
    return `Unknown tool "${call.name}". Available: ${names || "(none)"}`;
  }
  const checked = ports.inputChecks.check(call.name, call.input);
  if (!checked.ok) return checked.message;
  const ctx: ToolContext = { ...ports.toolContext, signal: ports.signal };
  try {
    const plan = tool.plan ? await tool.plan(checked.input, ctx) : { paths: [] };
    return { tool, input: checked.input, ctx, plan };
  } catch (err) {
    throwIfMachineLimit(err);
    return failureText(call, err);
  }
}

/** What the model reads when a tool throws: a ToolError's own words, else what failed. */
function failureText(call: ToolCallBlock, err: unknown): string {
  return err instanceof ToolError ? err.message : `${call.name} failed: ${errorMessage(err)}`;
}

async function decide(ports: StepLoopPorts, call: ToolCallBlock, { tool, input, plan }: PreparedCall): Promise<Decision> {
  throwIfCancelled(ports.signal);
  return ports.approval.decide(
    {
      callId: call.id, tool: call.name, effect: tool.effect, input,
      workspace: ports.toolContext.workspace, paths: plan.paths,
      ...(plan.command !== undefined ? { command: plan.command } : {}),
    },
    ports.signal,
  );
}

function toResultContent(content: string | ContentBlock[], filter: (text: string) => string): ToolResultBlock["content"] {
  if (typeof content === "string") return filter(content);
  return content
    .filter((b): b is Extract<ContentBlock, { type: "text" | "image" }> => b.type === "text" || b.type === "image")
    .map((b) => (b.type === "text" ? { ...b, text: filter(b.text) } : b));
}

function previewOf(result: ToolResultBlock): string {
  const text = typeof result.content === "string"
    ? result.content
    : result.content.map((b) => (b.type === "text" ? b.text : `[${b.mediaType}]`)).join("\n");
  return text.length > RESULT_PREVIEW_CHARS ? `${text.slice(0, RESULT_PREVIEW_CHARS)}…` : text;
}

function throwIfCancelled(signal: AbortSignal, cause?: unknown): void {
  if (signal.aborted) throw cancelledError(signal, cause);
}

/**
 * The error a cancelled turn ends with: the abort reason itself when the driver gave a typed
 * one (a runner's timeout), else a plain cancellation.
 */
export function cancelledError(signal: AbortSignal, cause?: unknown): RhemaError {
  if (signal.reason instanceof RhemaError) return signal.reason;
  return new CancelledError("the turn was cancelled", { cause: cause ?? signal.reason });
}
