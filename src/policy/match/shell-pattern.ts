/**
 * Shell command patterns, matched word by word against a simple command:
 * - `npm test` matches exactly the words `npm test`;
 * - a final bare `*` matches any further arguments, none included (`git diff *`);
 * - a bare `**` matches any number of words anywhere (`git ** push **` catches `git -C x push`);
 * - `*` inside a word matches any characters (`--output*`); quoted text is literal;
 * - the command name matches by basename (`rm` matches `/bin/rm`) — except that, for an allow,
 *   only a program in the system's folders (`/bin`, `/usr/bin`, `/usr/local/bin`, the `sbin`s)
 *   matches by basename: a relative, in-workspace or other path (`./ls`, `/tmp/ls`) is a file
 *   the agent may have written, so only a pattern spelling that path matches it;
 * - leading `NAME=value` words allow those environment prefixes (`CI=* npm test`); a pattern of
 *   only assignments allows bare assignments; trailing `> "$OUT"` words name dynamic
 *   redirection targets.
 * A dynamic word (`$X`, `$(…)`, a glob) is "could be anything" to a deny pattern and "not
 * proven" to an allow pattern: it matches an allow only where the pattern says any word (`*`,
 * the final `*`, `**`) or spells the same dynamic text (`$(git rev-parse *)`).
 */
import type { ShellAssignment, ShellWord } from "../shell/grammar/shell-words.js";

export interface PatternWord {
  /** As written in the pattern. */
  raw: string;
  /** Matches a literal word's value: unquoted `*` is any characters, the rest is literal. */
  valueRegex: RegExp;
  /** Matches a dynamic word's source text; every `*` is any characters. */
  rawRegex: RegExp;
  /** The word spells something dynamic (`$`, a backquote, `<(`, `>(`). */
  dynamic: boolean;
  /** Bare unquoted `*`. */
  star: boolean;
  /** Bare unquoted `**`. */
  anyWords: boolean;
  /** The word after quote removal. */
  value: string;
}

export interface ShellPattern {
  source: string;
  env: Array<{ name: string; value: PatternWord }>;
  words: PatternWord[];
  /** Dynamic redirection targets the pattern names, e.g. `"$GITHUB_OUTPUT"`. */
  redirects: PatternWord[];
  /** Substitutions the pattern spells, as anchored globs (`$(git rev-parse *)`). */
  substitutions: RegExp[];
}

/** Thrown by `compileShellPattern` for a pattern that cannot be read; the message says why. */
export class ShellPatternError extends Error {}

interface Token {
  kind: "word" | "redirect";
  raw: string;
  value: string;
  regex: string;
  dynamic: boolean;
}

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const ANY = "[\\s\\S]*";

/** Index just past the `)` closing the `(` at `open`, skipping quoted text; -1 if unclosed. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") i++;
    else if (ch === "'") {
      i = text.indexOf("'", i + 1);
      if (i < 0) return -1;
    } else if (ch === "(") depth++;
    else if (ch === ")" && --depth === 0) return i + 1;
  }
  return -1;
}

/** Splits a pattern into words and redirection operators, bash-style. */
function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let cur: Token | null = null;
  const add: AddPart = (raw, value, regex, dynamic = false) => {
    cur ??= { kind: "word", raw: "", value: "", regex: "", dynamic: false };
    cur.raw += raw;
    cur.value += value;
    cur.regex += regex;
    cur.dynamic ||= dynamic;
  };
  const finish = (): void => {
    if (cur) tokens.push(cur);
    cur = null;
  };
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    const next = source[i + 1];
    if (/\s/.test(ch)) {
      finish();
      i++;
    } else if ((ch === "<" || ch === ">" || (ch === "&" && next === ">")) && next !== "(") {
      const op = /^(&>>|&>|>>|>\||>&|<&|>|<)/.exec(source.slice(i))![0];
      // Digits right before the operator are its file descriptor (`2>`), not a word.
      const fd = cur as Token | null;
      const fdText = fd !== null && /^\d+$/.test(fd.raw) ? fd.raw : "";
      if (fdText === "") finish();
      cur = null;
      tokens.push({ kind: "redirect", raw: fdText + op, value: op, regex: "", dynamic: false });
      i += op.length;
    } else if (ch === ";" || ch === "|" || ch === "&") {
      throw new ShellPatternError(`\`${ch}\` joins commands, and a pattern matches one simple command: write one pattern per command`);
    } else {
      i = readWordPart(source, i, add);
    }
  }
  finish();
  return tokens;
}

/** Reads one piece of a word at `i` (quoted text, a substitution, an escape, a character); returns the index after it. */
function readWordPart(source: string, i: number, add: AddPart): number {
  const ch = source[i]!;
  const next = source[i + 1];
  if ((ch === "$" || ch === "<" || ch === ">") && next === "(") {
    const end = closingParen(source, i + 1);
    if (end < 0) throw new ShellPatternError(`unclosed \`${ch}(\``);
    const text = source.slice(i, end);
    add(text, text, escapeRegex(text), true);
    return end;
  }
  if (ch === "'") {
    const end = source.indexOf("'", i + 1);
    if (end < 0) throw new ShellPatternError("unclosed single quote");
    const inner = source.slice(i + 1, end);
    add(source.slice(i, end + 1), inner, escapeRegex(inner));
    return end + 1;
  }
  if (ch === '"') return readDoubleQuoted(source, i, add);
  if (ch === "`") {
    const end = source.indexOf("`", i + 1);
    if (end < 0) throw new ShellPatternError("unclosed backquote");
    const text = source.slice(i, end + 1);
    add(text, text, escapeRegex(text), true);
    return end + 1;
  }
  if (ch === "\\") {
    if (next === undefined) throw new ShellPatternError("a pattern cannot end with a backslash");
    add(ch + next, next, escapeRegex(next));
    return i + 2;
  }
  if (ch === "$") {
    const m = /^\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(source.slice(i));
    const text = m ? m[0] : "$";
    add(text, text, escapeRegex(text), m !== null);
    return i + text.length;
  }
  add(ch, ch, ch === "*" ? ANY : escapeRegex(ch));
  return i + 1;
}

type AddPart = (raw: string, value: string, regex: string, dynamic?: boolean) => void;

function readDoubleQuoted(source: string, start: number, add: AddPart): number {
  let i = start + 1;
  let raw = '"';
  let value = "";
  let dynamic = false;
  while (i < source.length && source[i] !== '"') {
    const ch = source[i]!;
    if (ch === "\\" && i + 1 < source.length) {
      const next = source[i + 1]!;
      raw += ch + next;
      value += '$`"\\'.includes(next) ? next : ch + next;
      i += 2;
      continue;
    }
    if (ch === "$" && source[i + 1] === "(") {
      const end = closingParen(source, i + 1);
      if (end < 0) throw new ShellPatternError("unclosed `$(`");
      raw += source.slice(i, end);
      value += source.slice(i, end);
      dynamic = true;
      i = end;
      continue;
    }
    if (ch === "$" || ch === "`") dynamic = true;
    raw += ch;
    value += ch;
    i++;
  }
  if (i >= source.length) throw new ShellPatternError("unclosed double quote");
  add(`${raw}"`, value, escapeRegex(value), dynamic);
  return i + 1;
}

/** Every `$(…)`, `<(…)`, `>(…)` and backquoted part of a dynamic word, nested ones too. */
function substitutionFragments(raw: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    if ("$<>".includes(raw[i]!) && raw[i + 1] === "(" && raw[i + 2] !== "(") {
      const end = closingParen(raw, i + 1);
      if (end > 0) out.push(raw.slice(i, end));
    } else if (raw[i] === "`") {
      const end = raw.indexOf("`", i + 1);
      if (end > 0) {
        out.push(raw.slice(i, end + 1));
        i = end;
      }
    }
  }
  return out;
}

function globRegex(raw: string): RegExp {
  return new RegExp(`^${raw.split("*").map(escapeRegex).join(ANY)}$`);
}

function toPatternWord(token: Token): PatternWord {
  return {
    raw: token.raw,
    valueRegex: new RegExp(`^${token.regex}$`),
    rawRegex: globRegex(token.raw),
    dynamic: token.dynamic,
    star: token.raw === "*",
    anyWords: token.raw === "**",
    value: token.value,
  };
}

const ENV_WORD = /^([A-Za-z_][A-Za-z0-9_]*)=/;

/** Reads a pattern; throws `ShellPatternError` saying what is wrong with it. */
export function compileShellPattern(source: string): ShellPattern {
  const tokens = tokenize(source);
  const pattern: ShellPattern = { source, env: [], words: [], redirects: [], substitutions: [] };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind === "redirect") {
      const target = tokens[++i];
      if (target === undefined || target.kind !== "word") throw new ShellPatternError(`\`${token.raw}\` needs a target`);
      pattern.redirects.push(toPatternWord(target));
      continue;
    }
    const env = pattern.words.length === 0 ? ENV_WORD.exec(token.raw) : null;
    if (env !== null) {
      const valueTokens = tokenize(token.raw.slice(env[0].length));
      const valueToken = valueTokens[0] ?? { kind: "word", raw: "", value: "", regex: "", dynamic: false };
      pattern.env.push({ name: env[1]!, value: toPatternWord(valueToken) });
    } else {
      pattern.words.push(toPatternWord(token));
    }
  }
  if (pattern.words.length === 0 && pattern.env.length === 0) throw new ShellPatternError("the pattern names no command");
  for (const word of [...pattern.words, ...pattern.redirects, ...pattern.env.map((e) => e.value)]) {
    if (word.dynamic) pattern.substitutions.push(...substitutionFragments(word.raw).map(globRegex));
  }
  return pattern;
}

export type MatchMode = "allow" | "deny";

/** What a pattern is matched against: one command's assignments and words. */
export interface PatternSubject {
  env: readonly ShellAssignment[];
  argv: readonly ShellWord[];
  /** The canonical workspace root, for the command-name rule. */
  workspace: string;
}

function nameMatches(pattern: PatternWord, value: string, mode: MatchMode, workspace: string): boolean {
  const strip = (p: string): string => (p.startsWith("./") ? p.slice(2) : p);
  if (pattern.value.includes("/")) return pattern.valueRegex.test(value) || strip(pattern.value) === strip(value);
  if (!value.includes("/")) return pattern.valueRegex.test(value);
  const base = value.slice(value.lastIndexOf("/") + 1);
  if (mode === "deny") return pattern.valueRegex.test(base);
  const insideWorkspace = value === workspace || value.startsWith(`${workspace}/`);
  return SYSTEM_PROGRAM.test(value) && !insideWorkspace && pattern.valueRegex.test(base);
}

/**
 * Where an allow pattern's bare name (`ls`) also takes a program by its path: the system's own
 * folders. Anywhere else (`/tmp/ls`, `./ls`) a file may be what the agent put there.
 */
const SYSTEM_PROGRAM = /^\/(usr\/(local\/)?)?s?bin\/[^/]+$/;

function wordAllows(pattern: PatternWord, word: ShellWord, isName: boolean, workspace: string): boolean {
  if (word.kind === "literal") {
    return isName ? nameMatches(pattern, word.value, "allow", workspace) : pattern.valueRegex.test(word.value);
  }
  if (pattern.raw === word.raw || (pattern.dynamic && pattern.rawRegex.test(word.raw))) return true;
  return !isName && pattern.star && !word.multi && word.kind !== "unknown" && word.kind !== "glob";
}

function wordDenies(pattern: PatternWord, word: ShellWord, isName: boolean, workspace: string): boolean {
  if (word.kind !== "literal") return true;
  return isName ? nameMatches(pattern, word.value, "deny", workspace) : pattern.valueRegex.test(word.value);
}

/** Word-sequence match; in deny mode a multi word may stand for any number of words. */
function sequenceMatches(words: readonly PatternWord[], argv: readonly ShellWord[], mode: MatchMode, workspace: string): boolean {
  const memo = new Map<number, boolean>();
  const stride = argv.length + 1;
  const at = (p: number, c: number): boolean => {
    const key = p * stride + c;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const result = step(p, c);
    memo.set(key, result);
    return result;
  };
  const step = (p: number, c: number): boolean => {
    const word = argv[c];
    if (p === words.length) {
      return c === argv.length || (mode === "deny" && word !== undefined && word.kind !== "literal" && word.multi && at(p, c + 1));
    }
    const pattern = words[p]!;
    if (pattern.anyWords || (pattern.star && p === words.length - 1)) {
      for (let k = c; k <= argv.length; k++) if (at(p + 1, k)) return true;
      return false;
    }
    if (word === undefined) return false;
    if (mode === "deny" && word.kind !== "literal" && word.multi) {
      return at(p, c + 1) || at(p + 1, c) || at(p + 1, c + 1);
    }
    const matches = mode === "allow" ? wordAllows(pattern, word, c === 0, workspace) : wordDenies(pattern, word, c === 0, workspace);
    return matches && at(p + 1, c + 1);
  };
  return at(0, 0);
}

function assignmentMatches(pattern: PatternWord, value: ShellWord, mode: MatchMode): boolean {
  if (value.kind === "literal") return pattern.valueRegex.test(value.value);
  if (mode === "deny") return true;
  return pattern.raw === value.raw || (pattern.dynamic && pattern.rawRegex.test(value.raw)) || (pattern.star && value.kind !== "unknown");
}

/**
 * Allow: the words match, and every assignment the command carries is one the pattern names.
 * A command with no words (a bare assignment) is allowed only by a pattern of assignments.
 */
export function patternAllows(pattern: ShellPattern, subject: PatternSubject): boolean {
  const envCovered = subject.env.every((a) =>
    pattern.env.some((p) => p.name === a.name && assignmentMatches(p.value, a.value, "allow")));
  if (!envCovered) return false;
  if (subject.argv.length === 0) return pattern.words.length === 0;
  return pattern.words.length > 0 && sequenceMatches(pattern.words, subject.argv, "allow", subject.workspace);
}

/** Deny: the words could match (dynamic words could be anything), and any assignment the pattern names is present. */
export function patternDenies(pattern: ShellPattern, subject: PatternSubject): boolean {
  const envPresent = pattern.env.every((p) =>
    subject.env.some((a) => a.name === p.name && assignmentMatches(p.value, a.value, "deny")));
  if (!envPresent) return false;
  if (pattern.words.length === 0) return pattern.env.length > 0 && subject.env.length > 0;
  return subject.argv.length > 0 && sequenceMatches(pattern.words, subject.argv, "deny", subject.workspace);
}

/** True when the pattern spells a substitution matching `text` (e.g. `$(git rev-parse *)`). */
export function patternNamesSubstitution(pattern: ShellPattern, text: string): boolean {
  return pattern.substitutions.some((regex) => regex.test(text));
}

/** True when the pattern names a dynamic redirection target (`> "$GITHUB_OUTPUT"`). */
export function patternNamesRedirect(pattern: ShellPattern, target: ShellWord): boolean {
  return pattern.redirects.some((p) => p.raw === target.raw || (p.dynamic && p.rawRegex.test(target.raw)));
}
