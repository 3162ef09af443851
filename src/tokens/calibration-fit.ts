/**
 * Fits a calibrated counter's factors from requests with their billed prompt tokens, and says
 * how well they fit, on the requests fitted and on sessions held out. Pure.
 *
 * The model: billed prompt tokens of request i of session s =
 *   intercept_s + Σ_kind chars_kind(i) × perChar_kind + messages(i) × perMessage
 *   + toolBlocks(i) × perToolBlock + images(i) × IMAGE_TOKENS.
 * The intercept stands for what the sample does not show and every request of a session carries
 * (a Claude Code log holds neither the system prompt nor the tools: ~15–20k tokens). It is taken
 * from each session's first request: the fit runs on each later request's difference from its
 * session's first, by non-negative least squares, and a prediction adds the first request's
 * billed tokens. So a session's first request is exact by construction and is left out of the
 * error figures.
 *
 * A kind the samples hold too little of to fit (its characters change by less than
 * `MIN_FITTED_CHARS` across the differences) keeps chars/4 and is named in `unfitted`.
 */
import type { Message } from "../core/messages.js";
import type { Usage } from "../core/provider.js";
import { CONTENT_KINDS, emptyMeasure, measureContent, type CalibrationFactors, type ContentKind } from "../core/token-counter.js";
import { CHARS_PER_TOKEN, IMAGE_TOKENS } from "../core/token-estimate.js";

/** One request as sent, with what it was billed. */
export interface CalibrationSample {
  session: string;
  system: string | null;
  tools: readonly unknown[];
  messages: readonly Message[];
  billed: Usage;
  /** The model billed, when known (`bench calibrate --model` keeps one tokenizer's requests). */
  model?: string;
}

export interface ErrorFigures {
  requests: number;
  aggregateErrorPct: number;
  meanRequestErrorPct: number;
}

export interface CalibrationFit {
  factors: CalibrationFactors;
  sessions: number;
  fitted: ErrorFigures;
  heldOut: (ErrorFigures & { folds: number }) | null;
  unfitted: ContentKind[];
}

export const MIN_FITTED_CHARS = 1_000;
/**
 * Where a fitted factor may land: real tokenizers give 1.5–5 characters a token on text, and a
 * message's or tool block's framing is a few dozen tokens at most. Bounds keep a kind the samples
 * barely vary, or one collinear with another, from a value no tokenizer has.
 */
export const TOKENS_PER_CHAR_BOUNDS: readonly [number, number] = [0.2, 0.67];
export const FRAMING_BOUNDS: readonly [number, number] = [0, 40];
/** At most this many folds for the held-out error. */
export const MAX_FOLDS = 5;

/** The features of one request, in this order: the four kinds' characters, messages, tool blocks. */
const FEATURES = [...CONTENT_KINDS, "perMessage", "perToolBlock"] as const;

interface Row {
  session: string;
  x: number[];
  /** Billed prompt tokens less the images' flat count. */
  y: number;
}

export function billedPromptTokens(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
}

function rowOf(sample: CalibrationSample): Row {
  const m = measureContent(emptyMeasure(), { system: sample.system, tools: sample.tools, messages: sample.messages });
  return {
    session: sample.session,
    x: [...CONTENT_KINDS.map((k) => m.chars[k]), m.messages, m.toolBlocks],
    y: billedPromptTokens(sample.billed) - m.images * IMAGE_TOKENS,
  };
}

/** Samples grouped by session, in first-seen order; each session's rows in the order given. */
function bySession(samples: readonly CalibrationSample[]): Row[][] {
  const groups = new Map<string, Row[]>();
  for (const s of samples) {
    const list = groups.get(s.session) ?? [];
    list.push(rowOf(s));
    groups.set(s.session, list);
  }
  return [...groups.values()];
}

/**
 * Fits the factors on `samples` (at least one session with two requests) and measures the
 * error; the held-out error needs two such sessions. Throws a plain `Error` saying what is missing.
 */
export function fitCalibration(samples: readonly CalibrationSample[]): CalibrationFit {
  const sessions = bySession(samples).filter((rows) => rows.length >= 2);
  if (sessions.length === 0) throw new Error("no session has two requests with billed usage: the fit needs at least one (the first request of each session sets its intercept)");
  const { factors, unfitted } = fitFactors(sessions);
  const folds = Math.min(MAX_FOLDS, sessions.length);
  let heldOut: CalibrationFit["heldOut"] = null;
  if (folds >= 2) {
    const predictions: Array<[predicted: number, billed: number]> = [];
    for (let f = 0; f < folds; f++) {
      const train = sessions.filter((_, i) => i % folds !== f);
      const test = sessions.filter((_, i) => i % folds === f);
      const trained = fitFactors(train).factors;
      for (const rows of test) predictions.push(...predict(rows, trained));
    }
    heldOut = { ...errorFigures(predictions), folds };
  }
  return { factors, sessions: sessions.length, fitted: errorFigures(sessions.flatMap((rows) => predict(rows, factors))), heldOut, unfitted };
}

/** The error of given factors on `samples`, each session's intercept from its first request (as the fit measures). */
export function evaluateFactors(samples: readonly CalibrationSample[], factors: CalibrationFactors): ErrorFigures {
  return errorFigures(bySession(samples).filter((rows) => rows.length >= 2).flatMap((rows) => predict(rows, factors)));
}

function fitFactors(sessions: readonly Row[][]): { factors: CalibrationFactors; unfitted: ContentKind[] } {
  const diffs = sessions.flatMap((rows) => rows.slice(1).map((r) => ({ x: r.x.map((v, j) => v - rows[0]!.x[j]!), y: r.y - rows[0]!.y })));
  const unfitted = CONTENT_KINDS.filter((_, j) => diffs.reduce((n, d) => n + Math.abs(d.x[j]!), 0) < MIN_FITTED_CHARS);
  const fixed = new Map<number, number>(unfitted.map((k) => [CONTENT_KINDS.indexOf(k), 1 / CHARS_PER_TOKEN]));
  const free = FEATURES.map((_, j) => j).filter((j) => !fixed.has(j));
  const solved = nnls(
    diffs.map((d) => free.map((j) => d.x[j]!)),
    diffs.map((d) => d.y - [...fixed].reduce((n, [j, v]) => n + d.x[j]! * v, 0)),
    free.map((j) => (j < CONTENT_KINDS.length ? TOKENS_PER_CHAR_BOUNDS : FRAMING_BOUNDS)),
  );
  const value = (j: number) => fixed.get(j) ?? solved[free.indexOf(j)]!;
  return {
    factors: {
      perChar: Object.fromEntries(CONTENT_KINDS.map((k, j) => [k, round(value(j))])) as Record<ContentKind, number>,
      perMessage: round(value(CONTENT_KINDS.length)),
      perToolBlock: round(value(CONTENT_KINDS.length + 1)),
    },
    unfitted,
  };
}

/** Six significant digits: the file stays readable and the id stable. */
function round(v: number): number {
  return Number(v.toPrecision(6));
}

/** [predicted, billed] for each request after a session's first, the intercept taken from the first. */
function predict(rows: readonly Row[], factors: CalibrationFactors): Array<[number, number]> {
  const w = [...CONTENT_KINDS.map((k) => factors.perChar[k]), factors.perMessage, factors.perToolBlock];
  const dot = (x: readonly number[]) => x.reduce((n, v, j) => n + v * w[j]!, 0);
  const intercept = rows[0]!.y - dot(rows[0]!.x);
  return rows.slice(1).map((r) => [intercept + dot(r.x), r.y]);
}

function errorFigures(pairs: ReadonlyArray<[number, number]>): ErrorFigures {
  const billed = pairs.reduce((n, [, b]) => n + b, 0);
  const predicted = pairs.reduce((n, [p]) => n + p, 0);
  const relative = pairs.filter(([, b]) => b > 0).map(([p, b]) => Math.abs(p - b) / b);
  return {
    requests: pairs.length,
    aggregateErrorPct: billed === 0 ? 0 : ((predicted - billed) / billed) * 100,
    meanRequestErrorPct: relative.length === 0 ? 0 : (relative.reduce((n, e) => n + e, 0) / relative.length) * 100,
  };
}

/**
 * Non-negative least squares: min ‖X w − y‖² with w ≥ 0 (or within `bounds[j]`), by cyclic coordinate descent on the
 * normal equations with columns scaled to unit norm (a handful of columns: exact enough, and
 * simple). A column that is all zero gets 0.
 */
export function nnls(rows: readonly number[][], y: readonly number[], bounds?: ReadonlyArray<readonly [number, number]>): number[] {
  const k = rows[0]?.length ?? 0;
  const a = Array.from({ length: k }, () => new Array<number>(k).fill(0));
  const b = new Array<number>(k).fill(0);
  for (const [i, row] of rows.entries()) {
    for (let p = 0; p < k; p++) {
      b[p]! += row[p]! * y[i]!;
      for (let q = 0; q < k; q++) a[p]![q]! += row[p]! * row[q]!;
    }
  }
  const scale = a.map((r, p) => Math.sqrt(r[p]!));
  const z = new Array<number>(k).fill(0);
  for (let sweep = 0; sweep < 200_000; sweep++) {
    let moved = 0;
    for (let p = 0; p < k; p++) {
      if (scale[p] === 0) continue;
      let gradient = -b[p]! / scale[p]!;
      for (let q = 0; q < k; q++) if (scale[q] !== 0) gradient += (a[p]![q]! / (scale[p]! * scale[q]!)) * z[q]!;
      const [lo, hi] = bounds?.[p] ?? [0, Infinity];
      const next = Math.min(hi * scale[p]!, Math.max(lo * scale[p]!, z[p]! - gradient));
      moved = Math.max(moved, Math.abs(next - z[p]!));
      z[p] = next;
    }
    if (moved < 1e-10) break;
  }
  return z.map((v, p) => (scale[p] === 0 ? 0 : v / scale[p]!));
}
