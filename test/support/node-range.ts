/**
 * Whether a Node version satisfies an `engines.node` range, for the dependency-engines test.
 * A small subset of npm's semver ranges, the forms packages write there: `||` alternatives of
 * space-separated comparators, each `>=`, `>`, `<=`, `<`, `=`, `^`, `~` or none, before a version
 * that may be partial or hold `x`/`*` (`18`, `0.8.x`, `>= 10.*`). Anything else is a
 * `RangeSyntaxError`, so an unknown form fails the test loudly instead of passing by accident.
 * (semver itself is only a transitive dependency here, in two majors, so the tests do not lean on it.)
 */

export class RangeSyntaxError extends Error {}

type Triple = [number, number, number];

/** `20.19.0` or `v20.19.0` as numbers; prerelease and build parts are ignored. */
export function parseVersion(version: string): Triple {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  if (!m) throw new RangeSyntaxError(`not a version: ${JSON.stringify(version)}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

const compare = (a: Triple, b: Triple): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** The half-open interval [from, to) a comparator allows (`to` null: no upper end; `exact`: one version). */
interface Interval { from: Triple; to: Triple | null; fromOpen?: boolean; toClosed?: boolean }

function interval(comparator: string): Interval {
  const m = /^(>=|<=|>|<|=|\^|~)?v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?$/.exec(comparator);
  if (!m) throw new RangeSyntaxError(`unsupported comparator ${JSON.stringify(comparator)}`);
  const op = m[1] ?? "";
  const parts = [m[2], m[3], m[4]].map((p) => (p === undefined || /^[xX*]$/.test(p) ? null : Number(p)));
  // How many leading parts are given: 0 (`*`), 1 (`20`), 2 (`0.8`), 3 (`1.2.3`).
  const given = parts.findIndex((p) => p === null) === -1 ? 3 : parts.findIndex((p) => p === null);
  const low: Triple = [parts[0] ?? 0, given >= 2 ? parts[1]! : 0, given >= 3 ? parts[2]! : 0];
  /** The first version past the partial one: `20` → 21.0.0, `0.8` → 0.9.0. */
  const next = (): Triple => (given === 1 ? [low[0] + 1, 0, 0] : [low[0], low[1] + 1, 0]);
  if (given === 0) return { from: [0, 0, 0], to: null };
  switch (op) {
    case "":
    case "=":
      return given === 3 ? { from: low, to: low, toClosed: true } : { from: low, to: next() };
    case ">=":
      return { from: low, to: null };
    case ">":
      return given === 3 ? { from: low, to: null, fromOpen: true } : { from: next(), to: null };
    case "<=":
      return given === 3 ? { from: [0, 0, 0], to: low, toClosed: true } : { from: [0, 0, 0], to: next() };
    case "<":
      return { from: [0, 0, 0], to: low };
    case "^": {
      if (low[0] > 0 || given === 1) return { from: low, to: [low[0] + 1, 0, 0] };
      if (low[1] > 0 || given === 2) return { from: low, to: [0, low[1] + 1, 0] };
      return { from: low, to: low, toClosed: true };
    }
    case "~":
      return { from: low, to: given === 1 ? [low[0] + 1, 0, 0] : [low[0], low[1] + 1, 0] };
    default:
      throw new RangeSyntaxError(`unsupported operator in ${JSON.stringify(comparator)}`);
  }
}

function within(v: Triple, i: Interval): boolean {
  const lo = compare(v, i.from);
  if (lo < 0 || (lo === 0 && i.fromOpen)) return false;
  if (i.to === null) return true;
  const hi = compare(v, i.to);
  return hi < 0 || (hi === 0 && i.toClosed === true);
}

/** Whether `version` satisfies `range` (an `engines.node` value). */
export function satisfiesNodeRange(version: string, range: string): boolean {
  const v = parseVersion(version);
  const alternatives = range.split("||").map((a) => a.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1"));
  return alternatives.some((alternative) => {
    if (/\s-\s/.test(alternative)) throw new RangeSyntaxError(`unsupported hyphen range ${JSON.stringify(alternative)}`);
    const comparators = alternative === "" ? ["*"] : alternative.split(/\s+/);
    return comparators.every((c) => within(v, interval(c)));
  });
}
