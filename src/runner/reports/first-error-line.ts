/**
 * The line of a failed command's output that says what went wrong — the one the summary's
 * failure excerpt leads with, the JUnit failure message and the Action's `::error` annotation
 * end with. Pure. Lines are ranked and the first line of the best rank wins:
 *
 *   1 an error or assertion: `AssertionError [ERR_ASSERTION]: …` (Node ≥ 24's spec reporter),
 *     `Error: Cannot find module …`, `error TS2322: …`, `panic: …`, pytest's `E   …Error: …`, and
 *     TAP's YAML `error:` field (Node 20/22's reporter off a TTY), told as
 *     `name [code]: message` from the same block, so every Node version gives the same line
 *   2 a failed test: `✖ name`, `not ok 1 - name`, jest's `FAIL file`, go's `--- FAIL: name`
 *   3 any other line that mentions an error or a failure
 *
 * Never a runner's closing tally (`ℹ fail 1`, TAP's `# fail 1`, `✖ failing tests:`): it says that
 * something failed, which the exit code already said.
 *
 * Colour codes (a runner forced to colour by FORCE_COLOR) are dropped before lines are judged.
 */
import { stripVTControlCharacters } from "node:util";

export interface ErrorLine {
  /** Index of the line in the output's lines (split on `\n`). */
  index: number;
  /** What to show: the line trimmed (for TAP's `error:` field, the error it describes). */
  text: string;
}

const RANKED: ReadonlyArray<readonly RegExp[]> = [
  [
    /^(?:E\s+)?(?:Uncaught\s+)?[A-Za-z_$][\w$.]*(?:Error|Exception)(?:\s*\[[\w.-]+\])?:/,
    /^(?:error|fatal|panic)(?:\[[\w-]+\])?:/i,
    /\berror (?:TS|CS)\d+:/,
    /^thread '.*' panicked at\b/,
  ],
  [/^\u2716\s/, /^not ok\b/, /^FAIL\b/, /^--- FAIL:/],
  [/\berror\b|\bERR!|\bcannot\b|\bfail(?:ed|ure)?\b|\bexception\b|\btraceback\b|\bpanic/i],
];

/**
 * A test runner's tally or section heading, never the line to show. \u2139 and \u2716 are
 * node --test's ℹ and ✖, escaped because the CLI bundle must be ASCII (scripts/build-cli.mjs).
 */
const TALLY = /^(?:\u2139\s|#\s*(?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)\b|\u2716 failing tests:$)/;

/** A TAP YAML diagnostic's `error:` key: inline (`error: 'text'`) or a block scalar (`error: |-`). */
const TAP_ERROR_KEY = /^(\s+)error:\s*(.*)$/;

/** The best error line of `output`, or null when no line looks like one. */
export function findErrorLine(output: string): ErrorLine | null {
  const lines = splitLines(output);
  let best: { rank: number; line: ErrorLine } | null = null;
  for (let index = 0; index < lines.length; index += 1) {
    const tap = tapError(lines, index);
    const text = tap ?? lines[index]!.trim();
    if (text === "" || TALLY.test(text)) continue;
    const rank = tap !== null ? 0 : RANKED.findIndex((patterns) => patterns.some((p) => p.test(text)));
    if (rank < 0 || (best !== null && best.rank <= rank)) continue;
    best = { rank, line: { index, text } };
    if (rank === 0) break;
  }
  return best?.line ?? null;
}

/** The best error line, else the first line that is not a tally, else "". */
export function firstErrorLine(output: string): string {
  const found = findErrorLine(output);
  if (found) return found.text;
  return splitLines(output).map((line) => line.trim()).find((line) => line !== "" && !TALLY.test(line)) ?? "";
}

function splitLines(output: string): string[] {
  return stripVTControlCharacters(output).split("\n").map((line) => line.replace(/\r$/, ""));
}

/**
 * `lines[index]` as TAP's `error:` field of a failed test's YAML block, told as the error it
 * describes (`AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:`, the
 * block's `name` and `code` before its message); null for any other line.
 */
function tapError(lines: readonly string[], index: number): string | null {
  const key = TAP_ERROR_KEY.exec(lines[index]!);
  if (!key || !insideTapBlock(lines, index)) return null;
  const indent = key[1]!.length;
  const value = key[2]!.trim();
  const message = /^[|>][-+]?$/.test(value) ? blockScalarFirstLine(lines, index, indent) : unquote(value);
  if (message === "") return null;
  const fields = blockFields(lines, index, indent);
  const name = fields.get("name");
  if (name === undefined) return message;
  const code = fields.get("code");
  return `${name}${code !== undefined ? ` [${code}]` : ""}: ${message}`;
}

/** Whether a `  ---` opens a YAML block above `index` with no `  ...` closing it in between. */
function insideTapBlock(lines: readonly string[], index: number): boolean {
  for (let i = index - 1; i >= 0; i -= 1) {
    const line = lines[i]!.trim();
    if (line === "---") return true;
    if (line === "..." || /^(?:not )?ok\b/.test(line)) return false;
  }
  return false;
}

function blockScalarFirstLine(lines: readonly string[], index: number, indent: number): string {
  for (let i = index + 1; i < lines.length; i += 1) {
    const line = lines[i]!;
    if (line.trim() === "") continue;
    return leadingSpaces(line) > indent ? line.trim() : "";
  }
  return "";
}

/** The block's plain `key: 'value'` fields at the `error:` key's indentation. */
function blockFields(lines: readonly string[], index: number, indent: number): Map<string, string> {
  const fields = new Map<string, string>();
  const field = /^(\w+):\s*(.+)$/;
  for (const step of [-1, 1]) {
    for (let i = index + step; i >= 0 && i < lines.length; i += step) {
      const line = lines[i]!;
      if (line.trim() === "---" || line.trim() === "...") break;
      if (leadingSpaces(line) !== indent) continue;
      const match = field.exec(line.trim());
      if (match && !fields.has(match[1]!)) fields.set(match[1]!, unquote(match[2]!));
    }
  }
  return fields;
}

function leadingSpaces(line: string): number {
  return line.length - line.trimStart().length;
}

/** A YAML scalar as written by node's TAP reporter: `'it''s'`, `"x"`, or plain. */
function unquote(value: string): string {
  const text = value.trim();
  if (text.length >= 2 && text.startsWith("'") && text.endsWith("'")) return text.slice(1, -1).replaceAll("''", "'");
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    try {
      return String(JSON.parse(text));
    } catch {
      return text.slice(1, -1);
    }
  }
  return text;
}
