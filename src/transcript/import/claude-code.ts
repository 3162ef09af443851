/**
 * Claude Code session logs (`~/.claude/projects/<project>/<session>.jsonl`, and the subagents'
 * `agent-*.jsonl`, which the caller finds beside a main file, or their lines inline in the main
 * file, `isSidechain`, as older versions wrote them) as replay sessions.
 *
 * One line per event: `user` and `assistant` lines carry the API message in `message`; one API
 * response is often written as several assistant lines, one per content block, sharing
 * `message.id` and `usage` — they are one request, billed once (the last line's prompt figures,
 * the largest output count: earlier lines may carry a partial one). Lines
 * chain by `parentUuid`: the conversation is the chain that ends at the last message (a rewind
 * or an edit leaves branches off it, skipped and counted), with the blocks of a response and
 * the results of its calls kept when the chain runs through their siblings. A `system` line of
 * subtype `compact_boundary` is the harness's own compaction: the next user line
 * (`isCompactSummary`) is its summary, and from there on requests carry the summary and what
 * follows it, not the whole log. Synthetic assistant lines (model `<synthetic>`: errors the
 * harness wrote itself) were no request. Thinking blocks are left out of the prompt (the API
 * drops earlier turns' thinking) and counted. The system prompt and tools are not in the log:
 * the session's hidden prefix stands for them.
 */
import type { ContentBlock, ImageBlock, ImageMediaType, TextBlock } from "../../core/messages.js";
import { IMAGE_MEDIA_TYPES } from "../../core/messages.js";
import type { Usage } from "../../core/provider.js";
import { CorpusFormatError, type ReplaySession } from "../replay-session.js";
import { readJsonLines, type JsonLine } from "./jsonl-lines.js";
import { SessionBuilder, isoMs, tokenCount } from "./session-builder.js";

type Json = Record<string, unknown>;

/** The session a Claude Code file holds (its inline subagents left out: `parseClaudeCodeSessions` has them). */
export function parseClaudeCodeSession(name: string, text: string): ReplaySession {
  return parseClaudeCodeSessions(name, text)[0]!;
}

/**
 * The sessions a Claude Code file holds: its own first, then each subagent written inline
 * (`isSidechain` lines in a main session's file, as 1.0.x wrote them; parallel ones interleaved,
 * each its own chain from a root with no parent), named `NAME › sidechain K` in order of start.
 */
export function parseClaudeCodeSessions(name: string, text: string): ReplaySession[] {
  const { lines, tornLastLine } = readJsonLines(name, text);
  const isMessage = (l: JsonLine) => (l.value.type === "user" || l.value.type === "assistant") && typeof l.value.message === "object" && l.value.message !== null;
  const sidechain = lines.find(isMessage)?.value.isSidechain === true;
  const own = lines.filter((l) => !isMessage(l) || (l.value.isSidechain === true) === sidechain);
  const main = sessionOf(name, own, tornLastLine);
  if (sidechain) return [main];
  const inline = sidechainGroups(lines.filter((l) => isMessage(l) && l.value.isSidechain === true));
  const subagents = inline.flatMap((group, k) => {
    const session = sessionOf(`${name} › sidechain ${k + 1}`, group, false, true);
    return session ? [session] : [];
  });
  return [main, ...subagents];
}

/** Sidechain lines grouped by the root their `parentUuid` chain starts at, in order of first line. */
function sidechainGroups(lines: readonly JsonLine[]): JsonLine[][] {
  const byUuid = new Map<string, JsonLine>();
  for (const l of lines) if (typeof l.value.uuid === "string") byUuid.set(l.value.uuid, l);
  const rootOf = new Map<JsonLine, JsonLine>();
  const root = (line: JsonLine): JsonLine => {
    const seen = new Set<JsonLine>();
    let at = line;
    while (!rootOf.has(at) && !seen.has(at)) {
      seen.add(at);
      const parent = typeof at.value.parentUuid === "string" ? byUuid.get(at.value.parentUuid) : undefined;
      if (!parent) break;
      at = parent;
    }
    const found = rootOf.get(at) ?? at;
    for (const l of seen) rootOf.set(l, found);
    return found;
  };
  const groups = new Map<JsonLine, JsonLine[]>();
  for (const l of lines) {
    const r = root(l);
    const group = groups.get(r) ?? [];
    group.push(l);
    groups.set(r, group);
  }
  return [...groups.values()];
}

function sessionOf(name: string, lines: readonly JsonLine[], tornLastLine: boolean): ReplaySession;
function sessionOf(name: string, lines: readonly JsonLine[], tornLastLine: boolean, optional: true): ReplaySession | null;
function sessionOf(name: string, lines: readonly JsonLine[], tornLastLine: boolean, optional = false): ReplaySession | null {
  const builder = new SessionBuilder(name, "claude-code");
  if (tornLastLine) builder.skip("torn last line");
  const conversation = conversationLines(lines);
  const responses = new Map<string, number>();
  let compacting = false;
  for (const line of lines) {
    const v = line.value;
    const type = typeof v.type === "string" ? v.type : "(no type)";
    if (type !== "user" && type !== "assistant") {
      if (type === "system" && v.subtype === "compact_boundary") compacting = true;
      else builder.skip(type === "system" ? `system ${String(v.subtype ?? "")}`.trim() : type);
      continue;
    }
    const message = objectField(name, line, "message");
    if (!conversation.has(line)) {
      builder.skip("off the conversation's chain");
      continue;
    }
    if (type === "user") {
      const blocks = userContent(name, line, message, builder);
      if (v.isCompactSummary === true || compacting) {
        builder.compact({ role: "user", content: blocks.length > 0 ? blocks : [{ type: "text", text: "" }] });
        compacting = false;
      } else builder.userBlocks(blocks);
      continue;
    }
    if (message.model === "<synthetic>") {
      builder.skip("synthetic assistant line");
      continue;
    }
    const blocks = assistantContent(name, line, message, builder);
    const billed = usageOf(message.usage);
    const key = responseKey(line);
    const known = responses.get(key);
    if (known !== undefined) {
      builder.extendAssistant(known, blocks);
      // Earlier lines of a response may carry a partial count of its output: keep the largest.
      const before = builder.requests.find((r) => r.logLength === known)?.billed;
      if (billed) builder.rebill(known, { ...billed, outputTokens: Math.max(billed.outputTokens, before?.outputTokens ?? 0) });
      continue;
    }
    responses.set(key, builder.assistant(blocks, {
      atMs: isoMs(v.timestamp),
      ...(billed ? { billed } : {}),
      ...(typeof message.model === "string" ? { model: message.model } : {}),
    }));
  }
  if (builder.requests.length === 0) {
    if (optional) return null;
    throw new CorpusFormatError(name, lines.length === 0 ? 1 : lines[lines.length - 1]!.no, "the session has no assistant message");
  }
  return builder.finish({ system: null, tools: [], fitHiddenPrefix: true, cache: "anthropic" });
}

/** One key per API response: the message id, else the request id, else the line itself. */
function responseKey(line: JsonLine): string {
  const message = line.value.message as Json;
  if (typeof message.id === "string") return `m:${message.id}`;
  if (typeof line.value.requestId === "string") return `r:${line.value.requestId}`;
  return `l:${line.no}`;
}

/**
 * The user and assistant lines of the conversation: on the `parentUuid` chain that ends at its last message —
 * with the other lines of a response on it, and the results of their calls. A log without
 * uuids is taken whole.
 */
function conversationLines(lines: readonly JsonLine[]): Set<JsonLine> {
  const mine = lines.filter((l) => (l.value.type === "user" || l.value.type === "assistant") && typeof l.value.message === "object" && l.value.message !== null);
  const last = mine[mine.length - 1];
  if (!last || typeof last.value.uuid !== "string") return new Set(mine);
  const byUuid = new Map<string, JsonLine>();
  for (const l of lines) if (typeof l.value.uuid === "string") byUuid.set(l.value.uuid, l);
  const chain = new Set<JsonLine>();
  for (let at: JsonLine | undefined = last; at && !chain.has(at);) {
    chain.add(at);
    const parent: string | null = typeof at.value.parentUuid === "string" ? at.value.parentUuid : typeof at.value.logicalParentUuid === "string" ? at.value.logicalParentUuid : null;
    at = parent === null ? undefined : byUuid.get(parent);
  }
  const responses = new Set<string>();
  for (const l of chain) if (l.value.type === "assistant") responses.add(responseKey(l));
  const kept = new Set(mine.filter((l) => chain.has(l) || (l.value.type === "assistant" && responses.has(responseKey(l)))));
  const calls = new Set<string>();
  for (const l of kept) for (const b of contentArray(l)) if (b.type === "tool_use" && typeof b.id === "string") calls.add(b.id);
  for (const l of mine) {
    if (kept.has(l) || l.value.type !== "user") continue;
    const results = contentArray(l).filter((b) => b.type === "tool_result");
    if (results.length > 0 && results.every((b) => calls.has(String(b.tool_use_id)))) kept.add(l);
  }
  return kept;
}

function contentArray(line: JsonLine): Json[] {
  const content = (line.value.message as Json).content;
  return Array.isArray(content) ? content.filter((b): b is Json => typeof b === "object" && b !== null) : [];
}

function objectField(source: string, line: JsonLine, field: string): Json {
  const value = line.value[field];
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CorpusFormatError(source, line.no, `field "${field}": expected an object, got ${JSON.stringify(value) ?? "nothing"}`);
  }
  return value as Json;
}

function blocksOf(source: string, line: JsonLine, message: Json): Json[] {
  const content = message.content;
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw new CorpusFormatError(source, line.no, `field "message.content": expected text or an array of blocks, got ${JSON.stringify(content) ?? "nothing"}`);
  return content.map((b, i) => {
    if (typeof b !== "object" || b === null) throw new CorpusFormatError(source, line.no, `field "message.content[${i}]": expected a block object`);
    return b as Json;
  });
}

function userContent(source: string, line: JsonLine, message: Json, builder: SessionBuilder): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const b of blocksOf(source, line, message)) {
    if (b.type === "text") out.push({ type: "text", text: String(b.text ?? "") });
    else if (b.type === "image") out.push(imageOf(b));
    else if (b.type === "tool_result") {
      out.push({
        type: "tool_result", callId: String(b.tool_use_id ?? ""), content: resultContent(b.content),
        ...(b.is_error === true ? { isError: true } : {}),
      });
    } else builder.skip(`user block ${String(b.type)}`);
  }
  return out;
}

function assistantContent(source: string, line: JsonLine, message: Json, builder: SessionBuilder): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const b of blocksOf(source, line, message)) {
    if (b.type === "text") out.push({ type: "text", text: String(b.text ?? "") });
    else if (b.type === "tool_use") out.push({ type: "tool_call", id: String(b.id ?? ""), name: String(b.name ?? ""), input: b.input ?? {} });
    else if (b.type === "thinking" || b.type === "redacted_thinking") builder.skip("thinking block");
    else builder.skip(`assistant block ${String(b.type)}`);
  }
  return out;
}

function resultContent(content: unknown): string | Array<TextBlock | ImageBlock> {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((b): b is Json => typeof b === "object" && b !== null)
    .map((b): TextBlock | ImageBlock => (b.type === "image" ? imageOf(b) : { type: "text", text: typeof b.text === "string" ? b.text : JSON.stringify(b) }));
}

function imageOf(block: Json): ImageBlock {
  const source = (typeof block.source === "object" && block.source !== null ? block.source : {}) as Json;
  const mediaType = (IMAGE_MEDIA_TYPES as readonly string[]).includes(String(source.media_type)) ? source.media_type as ImageMediaType : "image/png";
  return { type: "image", mediaType, data: typeof source.data === "string" ? source.data : "" };
}

/** Anthropic's usage object as rhema's `Usage`; absent or all zero: no bill. */
export function usageOf(value: unknown): Usage | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const u = value as Json;
  const creation = (typeof u.cache_creation === "object" && u.cache_creation !== null ? u.cache_creation : {}) as Json;
  const usage: Usage = {
    inputTokens: tokenCount(u.input_tokens),
    cacheReadTokens: tokenCount(u.cache_read_input_tokens),
    cacheWriteTokens: tokenCount(u.cache_creation_input_tokens),
    outputTokens: tokenCount(u.output_tokens),
  };
  const hour = tokenCount(creation.ephemeral_1h_input_tokens);
  if (hour > 0) usage.cacheWrite1hTokens = hour;
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens === 0 ? undefined : usage;
}
