/** rhema as a library: the engine, its ports and the pieces a driver needs. */
export { CodingAgent, type CodingAgentConfig, type ModelOutput } from "./agent.js";
export * from "./core/approval.js";
export * from "./core/commit-hook.js";
export * from "./core/errors.js";
export * from "./core/events.js";
export * from "./core/messages.js";
export * from "./core/provider.js";
export * from "./core/tool.js";
export * from "./core/transcript-types.js";
export { type Session, SESSION_VERSION, loadSession, saveSession } from "./core/session.js";
export { CheckpointStore, type CheckpointStoreOptions } from "./core/checkpoint-store.js";
export { INTERRUPTED_RESULT, conversationState, type ConversationState } from "./core/conversation.js";
export { ScriptedProvider, type ScriptedProviderOptions, type ScriptStep, type ScriptedCall } from "./providers/scripted.js";
export { PromptCacheSimulator, type PromptCacheSimulatorOptions, type CacheRules } from "./providers/prompt-cache-simulator.js";
export { builtinTools } from "./tools/index.js";
export { AnthropicProvider } from "./providers/anthropic.js";
export { OpenAIProvider } from "./providers/openai.js";
export { createProvider, type ProviderSpec } from "./providers/provider-factory.js";
