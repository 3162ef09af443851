/**
 * One table of the session formats `bench replay` reads, each told apart by its content (not its
 * name): the format's name and its parser. Pure: the callers read the files.
 */
import { CorpusFormatError, parseCorpusSession, type ReplaySession, type SessionFormat } from "../replay-session.js";
import { parseClaudeCodeSessions } from "./claude-code.js";
import { parseCodexRollout } from "./codex-rollout.js";
import { firstJsonObjects } from "./jsonl-lines.js";
import { parseMiniSweTrajectory } from "./mini-swe-agent.js";

/** The formats read from a single file (a rhema run is a directory). */
export type FileFormat = Exclude<SessionFormat, "rhema-run">;

const CODEX_TYPES = new Set(["session_meta", "turn_context", "response_item", "event_msg", "compacted"]);
const CLAUDE_CODE_TYPES = new Set(["user", "assistant", "system", "summary", "file-history-snapshot", "progress", "queue-operation"]);
const CORPUS_ROLES = new Set(["system", "user", "assistant", "tool"]);

/** The format of a session file from its first lines (or, for a JSON document, its shape). */
export function detectSessionFormat(name: string, text: string): FileFormat {
  if (text.trimStart().startsWith("{") && isTrajectory(text)) return "mini-swe-agent";
  const head = firstJsonObjects(text, 20);
  if (head.some((v) => CODEX_TYPES.has(String(v.type)) && typeof v.payload === "object")) return "codex";
  if (head.some((v) => CLAUDE_CODE_TYPES.has(String(v.type)) && ("message" in v || "uuid" in v || "sessionId" in v || "leafUuid" in v))) return "claude-code";
  if (head.some((v) => CORPUS_ROLES.has(String(v.role)))) return "corpus";
  throw new CorpusFormatError(name, 1, "not a session format rhema reads: expected a replay corpus file, a Claude Code session, a Codex rollout or a mini-swe-agent trajectory");
}

function isTrajectory(text: string): boolean {
  try {
    const doc = JSON.parse(text) as { messages?: unknown };
    return typeof doc === "object" && doc !== null && Array.isArray(doc.messages);
  } catch {
    return false;
  }
}

/**
 * The sessions of a file in its detected format — one, or a Claude Code session and the
 * subagents written inline in it; `times` applies to the corpus format only (`.times.json`).
 */
export function parseSessionFile(name: string, text: string, times: Readonly<Record<string, number>> | null): { format: FileFormat; sessions: ReplaySession[] } {
  const format = detectSessionFormat(name, text);
  switch (format) {
    case "corpus":
      return { format, sessions: [parseCorpusSession(name, text, times)] };
    case "claude-code":
      return { format, sessions: parseClaudeCodeSessions(name, text) };
    case "codex":
      return { format, sessions: [parseCodexRollout(name, text)] };
    case "mini-swe-agent":
      return { format, sessions: [parseMiniSweTrajectory(name, text)] };
  }
}
