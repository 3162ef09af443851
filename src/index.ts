/** rhema as a library: the engine, its ports, the policy engine and the suite runner's entry points. */

/** The engine: `CodingAgent` runs turns over a workspace; see its config and output types. */
export { CodingAgent, type CodingAgentConfig, type ModelOutput } from "./agent.js";
/** The Approval port: decides each side-effecting tool call. */
export * from "./core/approval.js";
/** The CommitHook port: awaited at every boundary of a turn. */
export * from "./core/commit-hook.js";
/** Typed errors with stable codes (`RhemaError`, `CodingAgentError`, …). */
export * from "./core/errors.js";
/** The agent's events and the EventSink port. */
export * from "./core/events.js";
/** Messages and content blocks (text, image, tool_call, tool_result). */
export * from "./core/messages.js";
/** The ModelProvider port, requests, stream events and usage. */
export * from "./core/provider.js";
/** The Tool port, tool specs and results. */
export * from "./core/tool.js";
/** Transcript sections and stats. */
export * from "./core/transcript-types.js";
/** Token counters: chars4, calibrated (per content kind), the content kinds; what a session records of its counter. */
export { chars4Counter, calibratedCounter, textKind, type TokenCounter, type TokenCounterRecord, type CalibrationFactors, type ContentKind } from "./core/token-counter.js";
/** The OpenAI tokenizer (o200k_base, cl100k_base) as a counter, loaded on first use. */
export { loadTokenizerCounter } from "./tokens/tokenizer-counter.js";
/** Which counter a provider's model counts with, and the counter a session recorded. */
export { chooseCounter, encodingForModel, loadRecordedCounter } from "./tokens/counter-choice.js";
/** Calibration files: parse (validated, id checked), format, and the counter of one. */
export { parseCalibration, formatCalibration, counterOfCalibration, calibrationId, type CalibrationFile } from "./tokens/calibration-file.js";
/** The persisted conversation and its version. */
export { type Session, type CallRecord, type CallState, SESSION_VERSION } from "./core/session.js";
/** Session files: load (validated) and save (0600, atomic). */
export { loadSession, saveSession } from "./store/session-file.js";
/** An EventSink that keeps the events in memory. */
export { MemorySink } from "./store/memory-sink.js";
/** Durable checkpoints (snapshot + fsync'd journal): install `store.hook`, resume with `store.load()`. */
export { CheckpointStore, type CheckpointStoreOptions } from "./store/checkpoint-store.js";
/** What a conversation's history says about the turn in progress, and the interrupted-call result. */
export { INTERRUPTED_RESULT, conversationState, type ConversationState } from "./core/conversation.js";
/** The offline provider that plays a script. */
export { ScriptedProvider, type ScriptedProviderOptions, type ScriptStep, type ScriptedCall } from "./providers/scripted.js";
/** The prompt-cache simulator (Anthropic and OpenAI rules). */
export { PromptCacheSimulator, type PromptCacheSimulatorOptions, type CacheRules } from "./cache/prompt-cache-simulator.js";
/** The seven built-in tools. */
export { builtinTools } from "./tools/index.js";
/** The Anthropic Messages API provider. */
export { AnthropicProvider, type AnthropicProviderOptions } from "./providers/anthropic.js";
/** The OpenAI Chat Completions provider (and compatible servers by base URL). */
export { OpenAIProvider } from "./providers/openai.js";
/** Makes a provider from a spec and an environment (API keys), as the CLI does. */
export { createProvider, type ProviderSpec } from "./providers/provider-factory.js";
/** The providers' bounded retry: attempts, backoff, and `onRetry`, told of each retry before its wait. */
export type { RetryOptions, RetryNotice } from "./providers/provider-retry.js";
/** Policy files: read and validate one (located errors). */
export { loadPolicyFile, PolicyFileError, type LoadedPolicy, type PolicyIssue } from "./policy/file/policy-file.js";
/** Loads a policy file or `preset:NAME`. */
export { loadPolicy } from "./policy/file/load-policy.js";
/** The Approval backed by a policy: pass it to `agent.turn`. */
export { PolicyApproval, type PolicyApprovalOptions, type PolicyDenial } from "./policy/decide/policy-approval.js";
/** A compiled policy. */
export type { Policy } from "./policy/file/policy-model.js";
/** The suite runner's first entry point: find, validate and select task files. */
export { loadTasks, type LoadTasksOptions, type LoadedTasks } from "./runner/tasks/suite-loader.js";
/** Runs loaded tasks in a run directory and writes junit.xml, stats.json and summary.md (resumable). */
export { runSuite, type SuiteRunOptions, type SuiteRunOutcome } from "./runner/execute/suite-runner.js";
