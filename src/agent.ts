/**
 * CodingAgent: the public face of the engine. It holds the session, the tools, the system
 * prompt and the transcript mirror, and hands each turn to the step loop (src/core/step-loop).
 * A facade: it checks its inputs and delegates.
 */
import { realpathSync, statSync } from "node:fs";
import { platform, release } from "node:os";
import { randomUUID } from "node:crypto";
import type { Approval } from "./core/approval.js";
import type { Boundary, CommitHook } from "./core/commit-hook.js";
import { conversationState, interruptedText, planRevive, pushUserContent, reviveUnansweredCalls, workspaceChanges } from "./core/conversation.js";
import { recordAnswer, withCallStates } from "./core/call-states.js";
import { CodingAgentError, RhemaError, errorMessage, type SpentBudget } from "./core/errors.js";
import type { EventSink } from "./core/events.js";
import { IMAGE_MEDIA_TYPES, rewriteMessageText, type ContentBlock, type Message } from "./core/messages.js";
import { ZERO_USAGE, type ModelProvider, type ModelRequest, type RequestPricer } from "./core/provider.js";
import { newSession, type CallRecord, type Session, type WorkspaceFingerprint } from "./core/session.js";
import { loadSession, saveSession } from "./store/session-file.js";
import { DEFAULT_MAX_TURN_STEPS, runSteps, runUnstartedCalls, type ModelOutput, type StepLoopPorts } from "./core/step-loop.js";
import type { ProcessStart, Tool, ToolSpec } from "./core/tool.js";
import { compileInputChecks, type ToolInputChecks } from "./core/tool-input/tool-input-check.js";
import type { Section, TranscriptConfig, TranscriptStats } from "./core/transcript-types.js";
import { chars4Counter, counterOfRecord, type TokenCounter } from "./core/token-counter.js";
import {
  DEFAULT_SYSTEM_TEMPLATE,
  renderEnvironmentReport,
  renderSystemPrompt,
} from "./prompt/system-prompt.js";
import { readProjectInstructions, type ProjectInstructions } from "./prompt/project-instructions.js";
import { type SandboxPlacement, type ShellEnv, builtinTools } from "./tools/index.js";
import { takeFingerprint } from "./tools/workspace-fingerprint.js";
import { TranscriptMirror, type RequestView } from "./transcript/transcript-mirror.js";
import { compactBeforeRequest, fixedTokensOf } from "./transcript/compaction.js";
import { eliderWorker, modelWorker, type CompactionWorker } from "./transcript/compaction-worker.js";

export type { ModelOutput } from "./core/step-loop.js";

export interface CodingAgentConfig {
  /** The folder the tools work in; canonicalized (realpath) at construction. */
  workspace: string;
  /** Replaces the built-in system prompt entirely; `null` sends none. */
  system?: string | null;
  /** A template for the built-in prompt, with `{{environment}}` where the report goes. */
  systemTemplate?: string;
  /** The most steps one turn may take (default 50). */
  maxTurnSteps?: number;
  /** Tools added to the built-in set; one with a built-in's name replaces it. */
  tools?: Tool[];
  /** `false` drops the built-in tools, leaving only `tools`. */
  builtinTools?: boolean;
  /** The transcript mirror's settings; `false` turns it (and its stats) off. */
  transcript?: TranscriptConfig | false;
  maxOutputTokens?: number;
  /** The schema the final answer follows, sent on each request (`ModelRequest.outputSchema`) for the providers that can constrain their text to it. */
  outputSchema?: Record<string, unknown>;
  /** Environment variable names the shell tool may pass through although they look secret. */
  allowEnv?: string[];
  /**
   * The environment the processes tools start (the built-in shell's commands) start from,
   * before secret-looking variables are scrubbed (`allowEnv` keeps named ones). Default: an
   * empty environment, in which bash uses its built-in PATH. The engine never reads
   * `process.env` itself: a driver that wants its own passes `env: process.env`.
   */
  env?: ShellEnv;
  /**
   * Run the built-in shell's commands in the bubblewrap sandbox so placed (the caller probed it);
   * the environment report names it. Default: unsandboxed.
   */
  sandbox?: SandboxPlacement;
  /** Rewrites tool output before the model and the session see it (a runner redacts secrets here). */
  filterToolOutput?: (text: string) => string;
  /**
   * Rewrites every text the session holds at each commit boundary, before the hook and the next
   * request see it: messages (the model's own text and tool-call inputs included), the
   * environment report, and the file names in started calls' workspace fingerprints. In memory
   * and on disk alike, so a resumed conversation's requests equal the uninterrupted one's; what
   * the model wrote reaches the next request rewritten, and the tools run the calls as committed.
   * Must be idempotent (the last message is rewritten again at each boundary). A runner redacts
   * secrets here.
   */
  filterCommitted?: (text: string) => string;
  /**
   * Who writes the summaries of compacted messages. Default: the agent's own model, or the
   * deterministic elider when the provider is scripted (a model worker would consume its script).
   */
  compactionWorker?: CompactionWorker;
  /**
   * Stops the process group a started call recorded, if it is still alive (same host, same pid
   * and start time), on resume before anything else runs; resolves true when it stopped one.
   * The runner passes the process layer's `stopRecordedGroup`. Without it none is stopped.
   */
  stopProcesses?: (info: ProcessStart) => Promise<boolean>;
  /**
   * `false` takes no workspace fingerprint before write and exec calls (then an interrupted
   * call's result cannot say what changed). Default: on.
   */
  fingerprint?: boolean;
  /**
   * Prices each request (the task model's and the compaction worker's) into the transcript
   * stats (`costUsd`, `workerCostUsd`, `unpricedRequests`) and the `usage` events. The runner
   * passes one built from its price table; without one, no cost is counted.
   */
  price?: RequestPricer;
  /**
   * Asked before each model request — the task model's and the compaction worker's — with the
   * stats as they stand (earlier requests and carried stats counted): a spent budget returned
   * stops the turn there with a `BudgetError` (code `budget`), the session committed at its
   * last boundary. The runner supplies the task's and the run's limits here.
   */
  budget?: (who: "task" | "worker", stats: TranscriptStats | null) => SpentBudget | null;
  /**
   * Counts the tokens of budgets, compaction, sections and the stats' request sizes (default
   * chars4). Recorded in the session at its first turn; a session that recorded one is counted
   * with that one (a tokenizer's must be given again, as this).
   */
  tokenCounter?: TokenCounter;
  /** Clock and id source, injected so tests are deterministic. */
  now?: () => Date;
  newId?: () => string;
  /**
   * When a new session began (default `now()`): the date its environment report gives. The runner
   * gives its trial's start; a cassette replay the recording's, so the requests match it.
   */
  createdAt?: Date;
}

export class CodingAgent {
  /** The conversation. Mutable between turns only. */
  session: Session;
  private readonly provider: ModelProvider;
  private readonly config: CodingAgentConfig;
  private readonly workspace: string;
  private readonly tools: ReadonlyMap<string, Tool>;
  private readonly inputChecks: ToolInputChecks;
  private readonly environment: string;
  private readonly mirror: TranscriptMirror | null;
  /** The token counter: the session's recorded one, else the config's (see `counterFor`). */
  readonly tokenCounter: TokenCounter;
  private commitHook: CommitHook | null = null;
  private readonly worker: CompactionWorker;
  /** What the last request was, for the stats: its size, the log it stood for, when it went. */
  private lastRequest: { tokens: number; uncompactedTokens: number; atMs: number } | null = null;
  private steers: string[] = [];
  private running = false;
  /** `capTurnSteps`: the next turns' step cap instead of `config.maxTurnSteps`; null: the config's. */
  private turnStepCap: number | null = null;
  /** Messages before this index went through `filterCommitted` at an earlier boundary (the last of them may have grown since). */
  private filteredMessages = 0;
  /** Fingerprints whose file names went through `filterCommitted` already. */
  private readonly filteredFingerprints = new WeakSet<WorkspaceFingerprint>();
  /** Call records whose text went through `filterCommitted` already. */
  private readonly filteredRecords = new WeakSet<CallRecord>();

  constructor(provider: ModelProvider, config: CodingAgentConfig, session?: Session) {
    this.provider = provider;
    this.config = config;
    checkConfig(config);
    this.workspace = canonicalWorkspace(config.workspace);
    this.tools = assembleTools(config);
    // The built-in schemas are ours and tested; a caller's are checked against their meta-schema.
    const given = new Set((config.tools ?? []).map((t) => t.spec));
    this.inputChecks = compileInputChecks([...this.tools.values()].map((t) => t.spec), { metaCheck: (spec) => given.has(spec) });
    const now = config.now ?? (() => new Date());
    // A session built by hand may lack call states: read off its messages (rhema's own have them all).
    this.session = session ? withCallStates(session) : newSession((config.newId ?? randomUUID)(), config.createdAt ?? now());
    this.environment = this.session.environment ?? this.renderEnvironment(new Date(this.session.createdAt));
    this.tokenCounter = counterFor(this.session, config.tokenCounter);
    this.mirror = config.transcript === false ? null : new TranscriptMirror({ ...(config.transcript ?? {}), ...(config.price ? { price: config.price } : {}), counter: this.tokenCounter });
    this.worker = config.compactionWorker ?? (provider.answersFromScript === true ? eliderWorker : modelWorker(provider));
    this.system(); // a template that cannot render fails construction, not the first turn
    if (session?.transcript && this.mirror) {
      this.mirror.adopt(session.transcript.sections);
      if (session.transcript.stats) this.mirror.carryStats(session.transcript.stats);
    }
  }

  /** Continues a saved conversation; its environment report is reused byte for byte. */
  static fromSession(provider: ModelProvider, config: CodingAgentConfig, session: Session): CodingAgent {
    return new CodingAgent(provider, config, session);
  }

  /** Reads and validates a session file; a corrupt one is a `SessionFileError` naming it. */
  static loadSessionFrom(path: string): Promise<Session> {
    return loadSession(path);
  }

  /** Installs the hook awaited at every boundary of the next turn; cleared when a turn ends. */
  setCommitHook(hook: CommitHook | null): void {
    this.commitHook = hook;
  }

  /** The tool definitions every request carries, in order. */
  toolSpecs(): ToolSpec[] {
    return [...this.tools.values()].map((t) => t.spec);
  }

  /** The MCP tools' specs by server, as the session stamps them at the first turn (undefined: no MCP tool). */
  private mcpToolSpecs(): Record<string, ToolSpec[]> | undefined {
    const byServer: Record<string, ToolSpec[]> = {};
    for (const tool of this.tools.values()) if (tool.server !== undefined) (byServer[tool.server] ??= []).push(tool.spec);
    return Object.keys(byServer).length > 0 ? byServer : undefined;
  }

  system(): string | null {
    if (this.config.system !== undefined) return this.config.system;
    try {
      return renderSystemPrompt(this.config.systemTemplate ?? DEFAULT_SYSTEM_TEMPLATE, this.session.environment ?? this.environment);
    } catch (err) {
      throw new CodingAgentError("prompt_render_failed", `cannot render the system prompt: ${errorMessage(err)}`, { cause: err });
    }
  }

  transcriptStats(): TranscriptStats | null {
    return this.mirror?.currentStats() ?? null;
  }

  carryTranscriptStats(saved: TranscriptStats): void {
    this.mirror?.carryStats(saved);
  }

  transcriptSections(): Section[] {
    return this.mirror?.sections() ?? [];
  }

  adoptTranscriptSections(sections: Section[]): void {
    this.mirror?.adopt(sections);
  }

  resetTranscriptStats(): void {
    this.mirror?.resetStats();
  }

  /**
   * Caps the steps of the turns from here on (a driver that runs several turns under one budget
   * gives each what is left of it). A whole number from 1.
   */
  capTurnSteps(steps: number): void {
    if (!Number.isInteger(steps) || steps < 1) throw new CodingAgentError("invalid_config", `Expected a turn's step cap to be a whole number from 1 and up, got ${steps}`);
    this.turnStepCap = steps;
  }

  /** Queues a text nudge, appended as a user message at the next step boundary. */
  steer(text: string): void {
    this.steers.push(text);
  }

  turn(input: string, sink: EventSink, approval: Approval): Promise<ModelOutput> {
    return this.turnWithCancel(input, sink, approval, new AbortController().signal);
  }

  turnWithCancel(input: string, sink: EventSink, approval: Approval, signal: AbortSignal): Promise<ModelOutput> {
    return this.turnMessageWithCancel({ role: "user", content: [{ type: "text", text: input }] }, sink, approval, signal);
  }

  turnMessage(message: Message, sink: EventSink, approval: Approval): Promise<ModelOutput> {
    return this.turnMessageWithCancel(message, sink, approval, new AbortController().signal);
  }

  async turnMessageWithCancel(message: Message, sink: EventSink, approval: Approval, signal: AbortSignal): Promise<ModelOutput> {
    checkInputMessage(message);
    return this.runTurn(sink, approval, signal, async () => {
      pushUserContent(this.session.messages, structuredClone(message.content));
      await this.commit("input");
    });
  }

  /**
   * Asks the model again without new input: the request that failed, byte for byte, with the
   * steps committed since in view. Unanswered calls are revived first.
   */
  async retryTurnWithCancel(sink: EventSink, approval: Approval, signal: AbortSignal): Promise<ModelOutput> {
    const state = conversationState(this.session.messages);
    if (state.kind === "empty" || state.kind === "ended") {
      throw new CodingAgentError("nothing_to_retry", `there is no unfinished turn to retry (the conversation is ${state.kind})`);
    }
    return this.runTurn(sink, approval, signal, null);
  }

  /** Writes the session (with the transcript mirror's state) as pretty JSON, 0600, atomically. */
  async saveSessionTo(path: string): Promise<void> {
    await saveSession(this.snapshot(), path);
  }

  private snapshot(): Session {
    const { journal: _journal, ...rest } = this.session;
    return this.mirror ? { ...rest, transcript: { sections: this.mirror.sections(), stats: this.mirror.currentStats() } } : rest;
  }

  /** `start` pushes the turn's input; null continues the turn (a retry), which ends at once when reviving ran a call that ends turns. */
  private async runTurn(sink: EventSink, approval: Approval, signal: AbortSignal, start: (() => Promise<void>) | null): Promise<ModelOutput> {
    if (this.running) throw new CodingAgentError("turn_in_progress", "a turn is already running on this agent");
    this.running = true;
    try {
      await sink.emit({ type: "turn_start", sessionId: this.session.id, at: (this.config.now ?? (() => new Date()))().toISOString() });
      this.session.environment ??= this.environment;
      const mcpTools = this.session.mcpTools ?? this.mcpToolSpecs();
      if (mcpTools) this.session.mcpTools = mcpTools;
      this.session.tokenCounter ??= this.tokenCounter.record;
      const ports = this.stepPorts(sink, approval, signal);
      const ended = await this.revive(ports);
      if (ended && start === null) return ended;
      await start?.();
      return await runSteps(ports);
    } catch (err) {
      const code = err instanceof RhemaError ? err.code : "internal";
      await Promise.resolve(sink.emit({ type: "turn_error", code, message: errorMessage(err) })).catch(() => {});
      throw err;
    } finally {
      this.running = false;
      this.commitHook = null;
    }
  }

  private stepPorts(sink: EventSink, approval: Approval, signal: AbortSignal): StepLoopPorts {
    const workspace = this.workspace;
    return {
      session: this.session, provider: this.provider, tools: this.tools, inputChecks: this.inputChecks, approval, sink, signal,
      commit: (boundary) => this.commit(boundary),
      buildRequest: (step) => this.buildRequest(step, sink, signal),
      recordUsage: (usage) => this.mirror?.recordRequest(usage, this.lastRequest ?? undefined) ?? null,
      takeSteers: () => this.steers.splice(0),
      ...(this.config.budget ? { spentBudget: () => this.config.budget!("task", this.transcriptStats()) } : {}),
      toolContext: { workspace, ...(this.config.allowEnv ? { allowEnv: this.config.allowEnv } : {}) },
      maxTurnSteps: this.turnStepCap ?? this.config.maxTurnSteps ?? DEFAULT_MAX_TURN_STEPS,
      now: this.config.now ?? (() => new Date()),
      ...(this.config.fingerprint !== false ? { fingerprint: (s: AbortSignal, paths?: readonly string[]) => takeFingerprint(workspace, { signal: s, ...(paths ? { paths } : {}) }) } : {}),
      ...(this.config.filterToolOutput ? { filterToolOutput: this.config.filterToolOutput } : {}),
    };
  }

  /**
   * Closes the round a history enters the turn with (docs/design.md §6, nothing runs twice): started calls get the
   * synthetic result — after their process groups still alive are stopped, naming the files
   * changed since they began — and calls that never started are approved and run now. When one
   * of those is of a tool that ends turns (`endsTurn`), the turn it belonged to is over: its output.
   */
  private async revive(ports: StepLoopPorts): Promise<ModelOutput | null> {
    const plan = planRevive(this.session.messages, this.session);
    if (plan.interrupted.length > 0) {
      const notes = new Map<string, string>();
      // The workspace now, walked once for every call whose fingerprint was of the whole workspace.
      let now: Awaited<ReturnType<typeof takeFingerprint>> | undefined;
      for (const { call, started } of plan.interrupted) {
        const { host, pgid, startTime, pidScope } = started ?? {};
        const stopped = host !== undefined && pgid !== undefined && startTime !== undefined && this.config.stopProcesses
          ? await this.config.stopProcesses({ host, pgid, startTime, ...(pidScope ? { pidScope } : {}) })
          : false;
        // Compared with the committed fingerprint, whose file names went through the filter too.
        const before = started?.fingerprint;
        let after: typeof now;
        // A write call's fingerprint was of its own paths: taken again for them (a path the filter
        // rewrote is not found again, and its change goes unnamed; the walk compares filtered names).
        if (before?.paths) after = this.filterFingerprint(await takeFingerprint(this.workspace, { paths: before.paths }));
        else if (before) after = now ??= this.filterFingerprint(await takeFingerprint(this.workspace, { signal: ports.signal, budgetMs: Infinity }));
        const changes = before && after ? workspaceChanges(before, after) : undefined;
        notes.set(call.id, interruptedText({ stopped, ...(changes ? { changes } : {}) }));
      }
      const revived = reviveUnansweredCalls(this.session.messages, notes);
      this.filteredMessages = 0; // results went in after calls anywhere in the history
      const at = ports.now();
      for (const call of revived) recordAnswer(this.session, { type: "tool_result", callId: call.id, content: notes.get(call.id)!, isError: true }, at);
      await ports.sink.emit({ type: "revived", callIds: revived.map((c) => c.id) });
      await this.commit("result");
    }
    if (plan.unstarted.length === 0) return null;
    await runUnstartedCalls(ports, plan.unstarted);
    if (!plan.unstarted.some((call) => this.tools.get(call.name)?.endsTurn === true)) return null;
    const message = [...this.session.messages].reverse().find((m) => m.role === "assistant")!;
    await ports.sink.emit({ type: "turn_end", steps: 0, stopReason: "tool_use", usage: ZERO_USAGE });
    return { message, stopReason: "tool_use", usage: ZERO_USAGE, steps: 0 };
  }

  private async buildRequest(step: number, sink: EventSink, signal: AbortSignal): Promise<ModelRequest> {
    const messages = this.session.messages;
    const system = this.system();
    const tools = this.toolSpecs();
    const nowMs = (this.config.now ?? (() => new Date()))().getTime();
    if (this.mirror) {
      const budget = this.config.budget;
      const spentBudget = budget ? { spentBudget: () => budget("worker", this.transcriptStats()) } : {};
      const flush = await compactBeforeRequest(this.mirror, this.worker, { messages, system, tools, nowMs, signal, ...spentBudget });
      if (flush) {
        await sink.emit({
          type: "flush", step, start: flush.start, end: flush.end, mode: flush.plan.mode, free: flush.plan.free,
          summaryTokens: flush.summaryTokens, worker: flush.worker, ...(flush.fallbackReason ? { note: flush.fallbackReason } : {}),
        });
        await this.commit("flush");
      }
    }
    const fixed = fixedTokensOf(system, tools, this.tokenCounter);
    const view: RequestView = this.mirror
      ? this.mirror.view(messages, fixed, nowMs)
      : { messages, compactedSteps: 0, cacheBreakpoints: messages.length > 0 ? [messages.length - 1] : [] };
    if (this.mirror) {
      this.lastRequest = { tokens: this.mirror.viewTokens(view.messages, fixed), uncompactedTokens: this.mirror.uncompactedTokens(messages, fixed), atMs: nowMs };
    }
    return {
      system,
      tools,
      // A shallow copy: committed messages never change, and the tail changes only after the
      // provider has sent the request.
      messages: view.messages.slice(),
      cacheBreakpoints: view.cacheBreakpoints,
      ...(view.cacheOneHourThrough !== undefined ? { cacheOneHourThrough: view.cacheOneHourThrough } : {}),
      ...(view.compactedSteps > 0 ? { compactedSteps: view.compactedSteps } : {}),
      ...(this.config.maxOutputTokens !== undefined ? { maxOutputTokens: this.config.maxOutputTokens } : {}),
      ...(this.config.outputSchema !== undefined ? { outputSchema: this.config.outputSchema } : {}),
    };
  }

  private async commit(boundary: Boundary): Promise<void> {
    this.filterCommittedText();
    this.mirror?.refresh(this.session.messages);
    const hook = this.commitHook;
    if (!hook) return;
    try {
      await hook({ boundary, session: this.session, sections: this.transcriptSections(), stats: this.transcriptStats() });
    } catch (err) {
      throw new CodingAgentError("commit_failed", `the commit hook failed at the ${boundary} boundary: ${errorMessage(err)}`, { cause: err });
    }
  }

  /** Applies `filterCommitted` to what changed since the last boundary (docs/design.md §1, the CommitHook port). */
  private filterCommittedText(): void {
    const filter = this.config.filterCommitted;
    if (!filter) return;
    const messages = this.session.messages;
    for (let i = Math.max(0, this.filteredMessages - 1); i < messages.length; i++) messages[i] = rewriteMessageText(messages[i]!, filter);
    this.filteredMessages = messages.length;
    if (this.session.environment !== undefined) this.session.environment = filter(this.session.environment);
    const calls = this.session.calls ?? {};
    for (const [id, record] of Object.entries(calls)) {
      if (this.filteredRecords.has(record)) continue;
      const next = this.filterCallRecord(record, filter);
      this.filteredRecords.add(next);
      if (next !== record) calls[id] = next;
    }
  }

  /** A call record with the text it carries through `filter`: a started call's file names, a denial's rule and reason. */
  private filterCallRecord(record: CallRecord, filter: (text: string) => string): CallRecord {
    if (record.state === "started" && record.fingerprint) {
      const fingerprint = this.filterFingerprint(record.fingerprint);
      return fingerprint === record.fingerprint ? record : { ...record, fingerprint };
    }
    if (record.state === "error" && record.denial) {
      const { rule, reason } = record.denial;
      const denial = { rule: rule === null ? null : filter(rule), reason: filter(reason) };
      return denial.rule === rule && denial.reason === reason ? record : { ...record, denial };
    }
    return record;
  }

  /** `fingerprint` with its file names through `filterCommitted` (once per fingerprint). */
  private filterFingerprint(fingerprint: WorkspaceFingerprint): WorkspaceFingerprint {
    const filter = this.config.filterCommitted;
    if (!filter || this.filteredFingerprints.has(fingerprint)) return fingerprint;
    const files = Object.fromEntries(Object.entries(fingerprint.files).map(([path, entry]) => [filter(path), entry]));
    const filtered = { ...fingerprint, files, ...(fingerprint.paths ? { paths: fingerprint.paths.map(filter) } : {}) };
    this.filteredFingerprints.add(filtered);
    return filtered;
  }

  private renderEnvironment(startedAt: Date): string {
    return renderEnvironmentReport({
      workspace: this.workspace,
      platform: `${platform()} ${release()}`,
      shell: "bash",
      date: startedAt.toISOString().slice(0, 10),
      tools: [...this.tools.values()].filter((t) => t.server === undefined).map((t) => t.spec.name),
      ...mcpServersFact(this.tools),
      ...projectInstructionsFacts(this.workspace),
      ...(this.config.sandbox ? { sandbox: { network: this.config.sandbox.network } } : {}),
    });
  }
}

/**
 * The counter a session counts with: the one it recorded (a tokenizer's only as `given`, which
 * must be that one), chars4 for a session with messages from before counters, else `given`.
 */
function counterFor(session: Session, given: TokenCounter | undefined): TokenCounter {
  const record = session.tokenCounter;
  if (record === undefined) return session.messages.length > 0 ? chars4Counter : given ?? chars4Counter;
  const made = counterOfRecord(record);
  if (made) return made;
  if (given?.id === (record.kind === "tokenizer" ? record.encoding : null)) return given!;
  throw new CodingAgentError("invalid_config", `the session was counted with the ${JSON.stringify(record)} token counter; continue it with that counter (\`tokenCounter\`), got ${given?.id ?? "none"}`);
}

function checkConfig(config: CodingAgentConfig): void {
  if (typeof config?.workspace !== "string" || config.workspace === "") {
    throw new CodingAgentError("invalid_config", `Expected \`workspace\` to be a folder path, got ${JSON.stringify(config?.workspace)}`);
  }
  const steps = config.maxTurnSteps;
  if (steps !== undefined && (!Number.isInteger(steps) || steps < 1)) {
    throw new CodingAgentError("invalid_config", `Expected \`maxTurnSteps\` to be a whole number from 1 and up, got ${JSON.stringify(steps)}`);
  }
}

function canonicalWorkspace(path: string): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (err) {
    throw new CodingAgentError("workspace_missing", `the workspace ${path} does not exist`, { cause: err });
  }
  if (!statSync(real).isDirectory()) throw new CodingAgentError("workspace_missing", `the workspace ${path} is not a folder`);
  return real;
}

function assembleTools(config: CodingAgentConfig): ReadonlyMap<string, Tool> {
  const tools = new Map<string, Tool>();
  const { env, sandbox } = config;
  if (config.builtinTools !== false) for (const t of builtinTools({ ...(env ? { env } : {}), ...(sandbox ? { sandbox } : {}) })) tools.set(t.spec.name, t);
  const seen = new Set<string>();
  for (const t of config.tools ?? []) {
    if (seen.has(t.spec.name)) throw new CodingAgentError("invalid_config", `two tools in \`tools\` are named "${t.spec.name}"`);
    seen.add(t.spec.name);
    tools.set(t.spec.name, t);
  }
  return tools;
}

/** The MCP servers the tools come from, sorted, for the environment report: names only, never their tools. */
function mcpServersFact(tools: ReadonlyMap<string, Tool>): { mcpServers?: string[] } {
  const servers = [...new Set([...tools.values()].flatMap((t) => (t.server === undefined ? [] : [t.server])))].sort();
  return servers.length > 0 ? { mcpServers: servers } : {};
}

function projectInstructionsFacts(workspace: string): { projectInstructions?: ProjectInstructions } {
  try {
    const found = readProjectInstructions(workspace);
    return found === null ? {} : { projectInstructions: found };
  } catch (err) {
    throw new CodingAgentError("prompt_render_failed", errorMessage(err), { cause: err });
  }
}

function checkInputMessage(message: Message): void {
  const bad = (why: string) => new CodingAgentError("invalid_input", `the turn's input ${why}`);
  if (message?.role !== "user" || !Array.isArray(message.content)) throw bad("must be a user message with a content list");
  for (const block of message.content as ContentBlock[]) {
    if (block.type === "text" && typeof block.text === "string") continue;
    if (block.type === "image") {
      if (!IMAGE_MEDIA_TYPES.includes(block.mediaType)) throw bad(`has an image of type ${JSON.stringify(block.mediaType)}; accepted: ${IMAGE_MEDIA_TYPES.join(", ")}`);
      if (typeof block.data !== "string" || block.data === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(block.data)) throw bad("has an image whose data is not base64");
      continue;
    }
    throw bad(`may hold only text and image blocks, got ${JSON.stringify((block as { type?: unknown }).type)}`);
  }
}
