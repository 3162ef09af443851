/**
 * A model request as a cassette keys it (issue 25): rhema's provider-neutral `ModelRequest` with
 * its provider and model, the parts that change from run to run without changing what was asked
 * made stable, and secrets redacted — on the recording side and the replaying side alike, so the
 * two meet. Pure: the runner hands in what is volatile in its run (paths, ids) and the redactor.
 *
 *   canonical   { provider, model, system, tools, messages, cacheBreakpoints, … } with every string
 *               normalised, then redacted; headers are never part of it
 *   normalised  the names of the rules that changed something (`workspace path`, `timestamp`, …)
 *   hash        sha256 of the canonical request as JSON with sorted keys
 *
 * A replay that finds no recorded request with its hash says where the nearest one differs first
 * (`firstDifference`): a changed tool description names `tools[2].description`.
 */
import { createHash } from "node:crypto";
import type { CanonicalRequest } from "../core/cassette-exchange.js";
import type { ModelRequest } from "../core/provider.js";

export type { CanonicalRequest };

/** One way a string is made stable: every match of `pattern` becomes `replacement`. */
export interface NormaliseRule {
  /** How the cassette's `normalised` list names it: `workspace path`, `timestamp`. */
  name: string;
  pattern: RegExp;
  replacement: string;
  /** Only inside tool results (durations a command printed), or everywhere (default). */
  toolResultsOnly?: boolean;
}

/** What a run knows to be volatile in its requests. */
export interface VolatileParts {
  /** Literal strings and their placeholders, longest first: the workspace, the run directory, ids the runner made. */
  literals: ReadonlyArray<{ name: string; value: string; placeholder: string }>;
  /** Rules of the task's own (`cassette.normalise` regexes), after the built-in ones. */
  rules?: readonly NormaliseRule[];
}

export interface KeyedRequest {
  request: CanonicalRequest;
  normalised: string[];
  hash: string;
}

/**
 * Built in: instants and dates anywhere (the environment report, a tool's output), and in tool
 * results the durations and temporary paths commands print. Order matters: an instant before
 * the date inside it.
 */
export const BUILT_IN_RULES: readonly NormaliseRule[] = [
  { name: "timestamp", pattern: /\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, replacement: "<timestamp>" },
  { name: "date", pattern: /\b\d{4}-\d{2}-\d{2}\b/g, replacement: "<date>" },
  // `0m0.003s` (time), then a number with a unit, then a number after a key that says it is one (`duration_ms: 2.18`, TAP).
  { name: "duration", pattern: /\b\d+m\d+(?:\.\d+)?s\b/g, replacement: "<duration>", toolResultsOnly: true },
  { name: "duration", pattern: /\b\d+(?:\.\d+)?\s?(?:ns|\u00b5s|us|ms|s|sec|secs|seconds|m|min|minutes)\b/g, replacement: "<duration>", toolResultsOnly: true },
  { name: "duration", pattern: /\b(\w*(?:duration|elapsed|took)\w*["']?\s*[:=]?\s*)\d+(?:\.\d+)?/gi, replacement: "$1<duration>", toolResultsOnly: true },
  { name: "temp path", pattern: /(?<![\w.-])\/(?:tmp|var\/tmp)\/[^\s'"`:;,)\]}]+/g, replacement: "<tmp>", toolResultsOnly: true },
];

/** The request keyed: canonical (normalised, then redacted), what was normalised, and its hash. */
export function keyRequest(req: ModelRequest, who: { provider: string; model: string | null }, volatile: VolatileParts, redact: (text: string) => string): KeyedRequest {
  const used = new Set<string>();
  const literals = [...volatile.literals].filter((l) => l.value !== "").sort((a, b) => b.value.length - a.value.length);
  const rules = [...BUILT_IN_RULES, ...(volatile.rules ?? [])];
  const stable = (text: string, inToolResult: boolean): string => {
    let out = text;
    for (const literal of literals) {
      if (!out.includes(literal.value)) continue;
      out = out.split(literal.value).join(literal.placeholder);
      used.add(literal.name);
    }
    for (const rule of rules) {
      if (rule.toolResultsOnly && !inToolResult) continue;
      const next = out.replace(rule.pattern, rule.replacement);
      if (next !== out) used.add(rule.name);
      out = next;
    }
    return redact(out);
  };
  const request: CanonicalRequest = {
    provider: who.provider,
    model: who.model,
    system: req.system === null ? null : stable(req.system, false),
    tools: mapStrings(req.tools, (s) => stable(s, false)) as unknown[],
    messages: req.messages.map((m) => mapMessage(m, stable)),
    cacheBreakpoints: [...req.cacheBreakpoints],
    ...(req.cacheOneHourThrough !== undefined ? { cacheOneHourThrough: req.cacheOneHourThrough } : {}),
    ...(req.maxOutputTokens !== undefined ? { maxOutputTokens: req.maxOutputTokens } : {}),
    ...(req.compactedSteps !== undefined && req.compactedSteps > 0 ? { compactedSteps: req.compactedSteps } : {}),
  };
  return { request, normalised: [...used].sort(), hash: requestHash(request) };
}

/** sha256 of the request as JSON with its keys sorted: the same request, the same hash, whatever order its fields were built in. */
export function requestHash(request: CanonicalRequest): string {
  return `sha256:${createHash("sha256").update(stableJson(request)).digest("hex")}`;
}

/** JSON with object keys sorted at every depth. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v);
}

/** Where two canonical requests first differ, in the order a person reads a request. */
export interface Difference {
  /** `tools[2].description`, `messages[4].content[0].text`, `messages` (a length). */
  path: string;
  recorded: string;
  requested: string;
}

/** Field order: who, then the prompt's stable prefix (system, tools), then the conversation. */
const FIELD_ORDER = ["provider", "model", "system", "tools", "messages", "cacheBreakpoints", "cacheOneHourThrough", "maxOutputTokens", "compactedSteps"];

/** The first place `requested` differs from `recorded`; null when they are equal. Values shown are capped at `cap` characters. */
export function firstDifference(recorded: CanonicalRequest, requested: CanonicalRequest, cap = 200): Difference | null {
  const found = differenceIn(recorded, requested, "", FIELD_ORDER);
  if (found === null) return null;
  const [a, b] = [shownText(found.recorded), shownText(found.requested)];
  // Long texts are shown around where they part, not from their start (a duration deep in a test's output).
  const from = Math.max(0, firstUnequal(a, b) - Math.floor(cap / 4));
  return { path: found.path, recorded: window(a, from, cap), requested: window(b, from, cap) };
}

function differenceIn(a: unknown, b: unknown, path: string, order?: readonly string[]): { path: string; recorded: unknown; requested: unknown } | null {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const inner = differenceIn(a[i], b[i], `${path}[${i}]`);
      if (inner) return inner;
    }
    return a.length === b.length ? null : { path: path || "(request)", recorded: `${a.length} entries`, requested: `${b.length} entries` };
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = [...new Set([...(order ?? []), ...Object.keys(a).sort(), ...Object.keys(b).sort()])];
    for (const key of keys) {
      if (!(key in a) && !(key in b)) continue;
      const inner = differenceIn(a[key], b[key], path ? `${path}.${key}` : key);
      if (inner) return inner;
    }
    return null;
  }
  return stableJson(a) === stableJson(b) ? null : { path: path || "(request)", recorded: a, requested: b };
}

function shownText(value: unknown): string {
  return value === undefined ? "(absent)" : typeof value === "string" ? value : stableJson(value);
}

function firstUnequal(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** `cap` characters of `text` from `from`, on one line (newlines as \n), with what was left out said. */
function window(text: string, from: number, cap: number): string {
  if (text.length <= cap && from === 0 && !text.includes("\n")) return text;
  const part = JSON.stringify(text.slice(from, from + cap)).slice(1, -1);
  const before = from > 0 ? `…(from character ${from + 1}) ` : "";
  const after = from + cap < text.length ? ` …(${text.length} characters)` : "";
  return `${before}${part}${after}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A copy of `value` with every string passed through `f` (object keys kept). */
export function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f)]));
  return value;
}

/** A message with its strings made stable; a tool result's content counts as tool output. */
function mapMessage(message: ModelRequest["messages"][number], stable: (text: string, inToolResult: boolean) => string): unknown {
  return {
    role: message.role,
    content: message.content.map((block) => mapStrings(block, (s) => stable(s, block.type === "tool_result"))),
  };
}
