/**
 * Whether two path globs could match a common path: a shell operand such as `.e*`, `.[e]nv`,
 * `?env` or `src/*` against a policy glob such as `**\/.env`. A deny rule on paths must judge a
 * glob operand by what it *could* expand to, and a folder read whole by what it could hold
 * (`folder/**`). Both globs are split into segments; `**` stands for any number of segments,
 * and within a segment `*`, `?` and `[…]` are matched against each other character by
 * character. The answer leans to "yes": a wildcard matches a leading dot (the line may turn
 * on `dotglob`), and what is not understood (extglobs) matches anything.
 */

type Token =
  | { kind: "char"; ch: string } | { kind: "one" } | { kind: "star" }
  | { kind: "class"; negated: boolean; bang: boolean; chars: string };
type Segment = { kind: "globstar" } | { kind: "tokens"; tokens: Token[] };

const MAX_ALTERNATIVES = 64;

/**
 * The words a brace expression stands for (`{a,b}c` → `ac`, `bc`; `{1..3}`), or null when
 * there would be more than `limit`. Text without braces is itself.
 */
export function expandBraces(text: string, limit = MAX_ALTERNATIVES): string[] | null {
  const open = findBrace(text);
  if (open === null) return [text];
  const [start, end, parts] = open;
  const out: string[] = [];
  for (const part of parts) {
    const expanded = expandBraces(text.slice(0, start) + part + text.slice(end + 1), limit);
    if (expanded === null) return null;
    out.push(...expanded);
    if (out.length > limit) return null;
  }
  return out;
}

/** The first brace expression: its start, end and alternatives; null when there is none. */
function findBrace(text: string): [number, number, string[]] | null {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\") { i++; continue; }
    if (text[i] !== "{") continue;
    let depth = 0;
    const commas: number[] = [];
    for (let j = i; j < text.length; j++) {
      const ch = text[j];
      if (ch === "\\") { j++; continue; }
      if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) {
        const body = text.slice(i + 1, j);
        if (commas.length > 0) {
          const cuts = [i, ...commas, j];
          return [i, j, cuts.slice(0, -1).map((c, k) => text.slice(c + 1, cuts[k + 1]))];
        }
        const sequence = expandSequence(body);
        if (sequence !== null) return [i, j, sequence];
        break;
      } else if (ch === "," && depth === 1) commas.push(j);
    }
  }
  return null;
}

function expandSequence(body: string): string[] | null {
  const match = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/.exec(body);
  if (match === null) return null;
  const numeric = /\d/.test(match[1]!);
  const from = numeric ? Number(match[1]) : match[1]!.charCodeAt(0);
  const to = numeric ? Number(match[2]) : match[2]!.charCodeAt(0);
  const step = Math.max(1, Math.abs(Number(match[3] ?? 1)));
  if (Math.abs(to - from) / step > MAX_ALTERNATIVES) return [body.replace(/.*/, "*")];
  const out: string[] = [];
  for (let v = from; from <= to ? v <= to : v >= to; v += from <= to ? step : -step) out.push(numeric ? String(v) : String.fromCharCode(v));
  return out;
}

function parseSegment(text: string): Segment {
  // A segment of three or more stars is taken as `**`: picomatch matches `a/**/***` against `a`
  // (no segment at all), though `a/***` alone wants one. Taken as a globstar it can only say yes more often.
  if (/^\*{2,}$/.test(text)) return { kind: "globstar" };
  if (/[@*+?!]\(/.test(text)) return { kind: "tokens", tokens: [{ kind: "star" }] };
  const tokens: Token[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\\" && i + 1 < text.length) tokens.push({ kind: "char", ch: text[++i]! });
    else if (ch === "*") { if (tokens.at(-1)?.kind !== "star") tokens.push({ kind: "star" }); }
    else if (ch === "?") tokens.push({ kind: "one" });
    else if (ch === "[") {
      const close = text.indexOf("]", i + 2);
      if (close < 0) { tokens.push({ kind: "char", ch }); continue; }
      const body = text.slice(i + 1, close);
      const negated = body.startsWith("!") || body.startsWith("^");
      tokens.push({ kind: "class", negated, bang: body.startsWith("!"), chars: expandClass(negated ? body.slice(1) : body) });
      i = close;
    } else tokens.push({ kind: "char", ch });
  }
  return { kind: "tokens", tokens };
}

/** `a-cx` → `abcx`; POSIX classes like `[:alpha:]` are kept as letters (the check leans to "yes"). */
function expandClass(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    if (body[i + 1] === "-" && i + 2 < body.length) {
      for (let c = body.charCodeAt(i); c <= body.charCodeAt(i + 2); c++) out += String.fromCharCode(c);
      i += 2;
    } else out += body[i];
  }
  return out;
}

function classHas(token: Extract<Token, { kind: "class" }>, ch: string): boolean {
  // `[!a]` is "not a" to bash but "! or a" to picomatch (the policy's globs): take either.
  if (token.chars.includes("[:") || token.bang) return true;
  return token.negated !== token.chars.includes(ch);
}

/** Whether two single-character tokens could match the same character. */
function charsMeet(a: Token, b: Token): boolean {
  if (a.kind === "char" && b.kind === "char") return a.ch === b.ch;
  if (a.kind === "char" && b.kind === "class") return classHas(b, a.ch);
  if (b.kind === "char" && a.kind === "class") return classHas(a, b.ch);
  return true;
}

/**
 * `step(i, j)` memoized over the pairs of positions of two sequences (the second `bLength`
 * long); a pair under evaluation reads as false, so cycles through stars end.
 */
function memoized(bLength: number, step: (i: number, j: number) => boolean): (i: number, j: number) => boolean {
  const memo = new Map<number, boolean>();
  return (i, j) => {
    const key = i * (bLength + 1) + j;
    let known = memo.get(key);
    if (known === undefined) {
      memo.set(key, false);
      known = step(i, j);
      memo.set(key, known);
    }
    return known;
  };
}

function segmentsMeet(a: Token[], b: Token[]): boolean {
  const at = memoized(b.length, (i, j) => step(i, j));
  const step = (i: number, j: number): boolean => {
    if (i === a.length && j === b.length) return true;
    const x = a[i];
    const y = b[j];
    if (x?.kind === "star" && at(i + 1, j)) return true;
    if (y?.kind === "star" && at(i, j + 1)) return true;
    if (x === undefined || y === undefined) return false;
    if (x.kind === "star") return y.kind === "star" ? at(i, j + 1) || at(i + 1, j) : at(i, j + 1);
    if (y.kind === "star") return at(i + 1, j);
    return charsMeet(x, y) && at(i + 1, j + 1);
  };
  return at(0, 0);
}

function pathsMeet(a: Segment[], b: Segment[]): boolean {
  const at = memoized(b.length, (i, j) => step(i, j));
  const step = (i: number, j: number): boolean => {
    if (i === a.length && j === b.length) return true;
    const x = a[i];
    const y = b[j];
    if (x?.kind === "globstar" && (at(i + 1, j) || (y !== undefined && at(i, j + 1)))) return true;
    if (y?.kind === "globstar" && (at(i, j + 1) || (x !== undefined && at(i + 1, j)))) return true;
    if (x === undefined || y === undefined || x.kind === "globstar" || y.kind === "globstar") return false;
    return segmentsMeet(x.tokens, y.tokens) && at(i + 1, j + 1);
  };
  return at(0, 0);
}

function parsePath(glob: string): Segment[] {
  return glob.split("/").filter((s) => s !== "" && s !== ".").map(parseSegment);
}

/** True when some path could match both globs (workspace-relative, `/`-separated, braces allowed). */
export function globsOverlap(a: string, b: string): boolean {
  const left = expandBraces(a);
  const right = expandBraces(b);
  if (left === null || right === null) return true;
  return left.some((x) => right.some((y) => pathsMeet(parsePath(x), parsePath(y))));
}

/** True when something under `folder` (or the folder itself) could match `glob`. */
export function couldHoldMatch(folder: string, glob: string): boolean {
  return globsOverlap(folder === "." ? "**" : `${folder}/**`, glob);
}
