/**
 * A task's agent turn: builds the agent (fresh, or from the task's checkpoint), installs the
 * checkpoint store as its commit hook, and starts, continues or skips the turn according to
 * where the saved conversation stands. Steers the model when its step budget runs low. A turn
 * that uses all of the task's steps is a `step_cap` error that says how to continue it: the
 * checkpoint stays at its last boundary, and a run with a larger cap continues it from there
 * (suite-runner.ts reopens it).
 *
 * A task with `output:` has the `final_answer` tool, always allowed, and its turn goes on until
 * the conversation ends on a valid answer (structured-answer.ts): an invalid one is sent back —
 * the call's tool result already says why; after a text answer a repair message does — until its
 * repairs are spent, then the trial errors with `output_invalid`. Where it stands is read off the
 * session each time, so a resume picks up exactly there.
 */
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { CodingAgent, type CodingAgentConfig } from "../../agent.js";
import type { Approval } from "../../core/approval.js";
import type { CommitHook } from "../../core/commit-hook.js";
import { conversationState } from "../../core/conversation.js";
import { CodingAgentError, OutputInvalidError } from "../../core/errors.js";
import type { AgentEvent, EventSink } from "../../core/events.js";
import type { ContentBlock, ImageMediaType, Message } from "../../core/messages.js";
import type { ModelProvider, RequestPricer } from "../../core/provider.js";
import type { SpentBudget } from "../../core/errors.js";
import type { TranscriptStats } from "../../core/transcript-types.js";
import type { Session } from "../../core/session.js";
import type { TokenCounter } from "../../core/token-counter.js";
import { loadRecordedCounter } from "../../tokens/counter-choice.js";
import type { SandboxPlacement } from "../../process/sandbox.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import type { CommandEnvironment } from "../plan/task-plan.js";
import { modelWorker } from "../../transcript/compaction-worker.js";
import { stopRecordedGroup } from "../../process/process-identity.js";
import { allowingFinalAnswer, answerCheckOf, finalAnswerTool } from "./final-answer-tool.js";
import { answerStanding, FINAL_ANSWER_TOOL, repairText } from "./structured-answer.js";
import { withTrialMcp } from "./trial-mcp.js";
import type { Tool } from "../../core/tool.js";

export const DEFAULT_MAX_STEPS = 40;

/** The task's step cap: its own `limits.maxSteps`, else the run's `--max-steps`, else `DEFAULT_MAX_STEPS`. */
export function stepCapOf(task: Pick<TaskDefinition, "limits">, defaults: { maxSteps?: number }): number {
  return task.limits.maxSteps ?? defaults.maxSteps ?? DEFAULT_MAX_STEPS;
}

/** The `step_cap` error of a task that used all `maxSteps` of its steps: what continues it. */
export function stepCapError(maxSteps: number, options?: { cause?: unknown }): CodingAgentError {
  return new CodingAgentError("step_cap",
    `the task used ${maxSteps === 1 ? "its 1 step" : `all ${maxSteps} of its steps`} without finishing; a larger --max-steps or limits.maxSteps continues it from its checkpoint`, options);
}
/** When this many steps are left, the model is told to wrap up. */
export const STEPS_LEFT_NUDGE = 2;

const MEDIA_TYPES: Record<string, ImageMediaType> = {
  ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
};

export interface TaskTurnOptions {
  task: TaskDefinition;
  workspace: string;
  provider: ModelProvider;
  approval: Approval;
  /** Where each boundary is committed: the task's checkpoint. */
  store: { readonly hook: CommitHook };
  saved: Session | null;
  sink: EventSink;
  signal: AbortSignal;
  maxSteps: number;
  now: () => Date;
  /** The environment the shell tool starts from, scrubbed, and the secret-looking names it kept (the agent scrubs again: idempotent). */
  commands: CommandEnvironment;
  /** Applied to tool output before the model sees it: the runner's secret redaction. */
  filterToolOutput: (text: string) => string;
  /** Applied to the session's text at each commit boundary (the same redaction): the model's own text included. */
  filterCommitted?: (text: string) => string;
  /** The model that writes compaction summaries, when the task names one; else the agent's default. */
  workerProvider?: ModelProvider | null;
  /** Prices each request into the session's stats (task-pricing.ts). */
  price?: RequestPricer;
  /** The shell tool's sandbox; absent: unsandboxed. */
  sandbox?: SandboxPlacement;
  /** Asked before each request (run-budget.ts): a spent budget stops the turn, resumably. */
  budget?: (who: "task" | "worker", stats: TranscriptStats | null) => SpentBudget | null;
  /** The plan's token counter; a saved session keeps the one it recorded (a tokenizer's is loaded again). */
  tokenCounter?: TokenCounter;
  /** When a new session begins: the trial's start, or in a cassette replay the recorded trial's. */
  sessionCreatedAt?: Date;
  /** `--restart-changed`: an MCP server whose specs changed since the checkpoint is taken as it now is (trial-mcp.ts). */
  restartChanged?: boolean;
}

/**
 * Runs (or continues) the task's turn; resolves with the agent when the turn has ended (on a valid
 * answer, with `output:`). The task's MCP servers run for the turn's length (trial-mcp.ts).
 */
export async function runTaskTurn(opts: TaskTurnOptions): Promise<CodingAgent> {
  return withTrialMcp({
    task: opts.task, workspace: opts.workspace, commands: opts.commands, signal: opts.signal, saved: opts.saved,
    restartChanged: opts.restartChanged ?? false, ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
  }, (toolset) => runTurnWith(opts, toolset?.tools ?? []));
}

async function runTurnWith(opts: TaskTurnOptions, mcpTools: readonly Tool[]): Promise<CodingAgent> {
  const output = opts.task.output;
  const schema = output?.schema ?? null;
  if (output && schema === null) throw new CodingAgentError("invalid_config", `${opts.task.file}: output.schema was not loaded (load the task with loadTaskFile)`);
  const config: CodingAgentConfig = {
    workspace: opts.workspace, transcript: opts.task.transcript ?? {}, now: opts.now,
    ...(opts.sessionCreatedAt ? { createdAt: opts.sessionCreatedAt } : {}),
    env: opts.commands.env, allowEnv: [...opts.commands.allowEnv], filterToolOutput: opts.filterToolOutput,
    ...(opts.filterCommitted ? { filterCommitted: opts.filterCommitted } : {}),
    ...(opts.workerProvider ? { compactionWorker: modelWorker(opts.workerProvider) } : {}),
    ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
    // A call a killed run had started may have left its processes running: stop them on resume.
    stopProcesses: async (info) => (await stopRecordedGroup(info)) === "stopped",
    ...(opts.price ? { price: opts.price } : {}),
    ...(opts.budget ? { budget: opts.budget } : {}),
    // The built-ins, then final_answer, then the MCP tools sorted: the same list on every run and resume.
    ...(schema || mcpTools.length > 0 ? { tools: [...(schema ? [finalAnswerTool(schema)] : []), ...mcpTools] } : {}),
    ...(schema ? { outputSchema: schema } : {}),
    ...(await counterForTurn(opts) ?? {}),
  };
  const taken = opts.saved ? stepsTaken(opts.saved.messages) : 0;
  const left = opts.maxSteps - taken;
  const agent = opts.saved
    ? CodingAgent.fromSession(opts.provider, { ...config, maxTurnSteps: Math.max(1, left) }, opts.saved)
    : new CodingAgent(opts.provider, { ...config, maxTurnSteps: opts.maxSteps });
  const approval = schema ? allowingFinalAnswer(opts.approval) : opts.approval;
  const check = schema ? answerCheckOf(schema) : null;
  for (;;) {
    const state = conversationState(agent.session.messages);
    const standing = check && output ? answerStanding(agent.session.messages, check, output.repairs) : null;
    if (standing?.kind === "accepted") return agent;
    if (standing?.kind === "exhausted") throw new OutputInvalidError(standing.errors, output!.repairs);
    if (standing === null && state.kind === "ended") return agent;
    const now = stepsTaken(agent.session.messages);
    if (now >= opts.maxSteps && state.kind !== "empty") throw stepCapError(opts.maxSteps);
    // A repair turn gets what is left of the task's steps, not a segment's worth again.
    if (state.kind !== "empty") agent.capTurnSteps(opts.maxSteps - now);
    agent.setCommitHook(opts.store.hook);
    const sink = steeringSink(opts.sink, agent, opts.maxSteps, now, schema !== null);
    try {
      if (state.kind === "empty") await agent.turnMessageWithCancel(await inputMessage(opts.task), sink, approval, opts.signal);
      else if (standing?.kind === "repair" && standing.via === "text") await agent.turnWithCancel(repairText(standing.errors, standing.repairsLeft), sink, approval, opts.signal);
      // A final_answer call's invalid input was answered with its errors; the model answers them.
      else await agent.retryTurnWithCancel(sink, approval, opts.signal);
    } catch (err) {
      // The engine's cap is this segment's (the steps left); the user's is the task's.
      if (err instanceof CodingAgentError && err.code === "step_cap") throw stepCapError(opts.maxSteps, { cause: err });
      throw err;
    }
    if (check === null) return agent;
  }
}

/** The accepted answer the conversation ends on, for a task with `output:`; undefined otherwise. */
export function acceptedOutput(task: Pick<TaskDefinition, "output">, messages: readonly Message[]): unknown {
  const output = task.output;
  if (!output?.schema) return undefined;
  const standing = answerStanding(messages, answerCheckOf(output.schema), output.repairs);
  return standing.kind === "accepted" ? standing.value : undefined;
}

/** The counter to give the agent: the saved session's tokenizer when it recorded one (the agent rebuilds the others itself), else the plan's. */
async function counterForTurn(opts: TaskTurnOptions): Promise<{ tokenCounter: TokenCounter } | null> {
  const record = opts.saved?.tokenCounter;
  if (record?.kind === "tokenizer" && opts.tokenCounter?.id !== record.encoding) return { tokenCounter: await loadRecordedCounter(record) };
  return opts.tokenCounter ? { tokenCounter: opts.tokenCounter } : null;
}

/** Model steps a conversation has taken: its assistant messages. */
export function stepsTaken(messages: readonly Message[]): number {
  return messages.filter((m) => m.role === "assistant").length;
}

/**
 * The sink the turn emits to: step numbers continue the task's count across resumes (the step
 * loop numbers each turn from 1), a step cap is told as the task's, and the model is steered
 * when its step budget runs low.
 */
function steeringSink(inner: EventSink, agent: CodingAgent, maxSteps: number, before: number, answersWithTool: boolean): EventSink {
  const finish = answersWithTool ? `give your answer with the \`${FINAL_ANSWER_TOOL}\` tool` : "give your summary";
  return {
    emit(raw: AgentEvent) {
      const moved = offsetSteps(raw, before);
      // The engine's step cap is the segment's; the transcript says the task's, as the result does.
      const event = moved.type === "turn_error" && moved.code === "step_cap" ? { ...moved, message: stepCapError(maxSteps).message } : moved;
      if (event.type === "step_end" && event.stopReason === "tool_use" && maxSteps - event.step === STEPS_LEFT_NUDGE) {
        agent.steer(`Only ${STEPS_LEFT_NUDGE} steps are left for this task: finish the change now and ${finish}.`);
      }
      return inner.emit(event);
    },
  };
}

/** `event` with its step number (or a turn's step count) moved on by the `before` steps the task took in earlier runs. */
export function offsetSteps(event: AgentEvent, before: number): AgentEvent {
  if (before === 0) return event;
  if (event.type === "turn_end") return { ...event, steps: event.steps + before };
  return "step" in event ? { ...event, step: event.step + before } : event;
}

async function inputMessage(task: TaskDefinition): Promise<Message> {
  const content: ContentBlock[] = [{ type: "text", text: task.prompt }];
  for (const path of task.images) {
    const mediaType = MEDIA_TYPES[extname(path).toLowerCase()];
    if (!mediaType) throw new CodingAgentError("invalid_input", `${path}: not a png, jpeg, gif or webp image`);
    content.push({ type: "image", mediaType, data: (await readFile(path)).toString("base64") });
  }
  return { role: "user", content };
}
