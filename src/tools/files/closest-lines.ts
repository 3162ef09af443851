/**
 * Finding where a failed `edit_file` probably meant: the run of file lines most like the text
 * the model asked to replace, by character-bigram similarity of trimmed lines. Pure functions.
 */

/** The best candidate region, 1-based. */
export interface ClosestLines {
  startLine: number;
  lines: string[];
  /** 0..1, mean similarity of the region's lines to the wanted ones. */
  score: number;
  /** The region equals the wanted text once runs of whitespace are ignored. */
  whitespaceOnly: boolean;
}

/** Below this mean similarity nothing is offered. */
const MIN_SCORE = 0.35;
/** Starting lines tried in full, picked by how well they match the first wanted line. */
const CANDIDATES = 8;
/** Wanted lines compared (a longer `old` is judged by its first lines). */
const MAX_COMPARED_LINES = 40;

/** The region of `text` most like `wanted`, or null when nothing is close. */
export function findClosestLines(text: string, wanted: string): ClosestLines | null {
  const fileLines = text.split("\n").map((l) => l.replace(/\r$/, ""));
  const wantedLines = trimBlankEnds(wanted.split("\n").map((l) => l.replace(/\r$/, "")));
  if (wantedLines.length === 0) return null;
  const compared = wantedLines.slice(0, MAX_COMPARED_LINES);
  const anchor = compared.findIndex((l) => l.trim() !== "");
  if (anchor === -1) return null;
  const anchorGrams = bigrams(compared[anchor]!.trim());
  const starts = fileLines
    .map((line, i) => ({ start: i - anchor, score: dice(anchorGrams, bigrams(line.trim())) }))
    .filter((c) => c.start >= 0 && c.start + compared.length <= fileLines.length)
    .sort((a, b) => b.score - a.score || a.start - b.start)
    .slice(0, CANDIDATES);
  let best: { start: number; score: number } | null = null;
  for (const { start } of starts) {
    const score = regionScore(fileLines, start, compared);
    if (!best || score > best.score) best = { start, score };
  }
  if (!best || best.score < MIN_SCORE) return null;
  const lines = fileLines.slice(best.start, best.start + wantedLines.length);
  return {
    startLine: best.start + 1,
    lines,
    score: best.score,
    whitespaceOnly: squash(lines.join("\n")) === squash(wantedLines.join("\n")),
  };
}

function regionScore(fileLines: readonly string[], start: number, wanted: readonly string[]): number {
  let sum = 0;
  for (const [i, line] of wanted.entries()) sum += dice(bigrams(line.trim()), bigrams((fileLines[start + i] ?? "").trim()));
  return sum / wanted.length;
}

function trimBlankEnds(lines: string[]): string[] {
  let from = 0;
  let to = lines.length;
  while (from < to && lines[from]!.trim() === "") from++;
  while (to > from && lines[to - 1]!.trim() === "") to--;
  return lines.slice(from, to);
}

function squash(s: string): string {
  return s.replace(/\s+/g, "");
}

function bigrams(s: string): Map<string, number> {
  const grams = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const g = s.slice(i, i + 2);
    grams.set(g, (grams.get(g) ?? 0) + 1);
  }
  if (s.length === 1) grams.set(s, 1);
  return grams;
}

/** Sørensen–Dice coefficient of two bigram multisets; two empty strings are equal (1). */
function dice(a: Map<string, number>, b: Map<string, number>): number {
  let sizeA = 0;
  let sizeB = 0;
  let shared = 0;
  for (const n of a.values()) sizeA += n;
  for (const n of b.values()) sizeB += n;
  if (sizeA === 0 && sizeB === 0) return 1;
  for (const [g, n] of a) shared += Math.min(n, b.get(g) ?? 0);
  return (2 * shared) / (sizeA + sizeB);
}
