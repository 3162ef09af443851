/**
 * Unknown keys in a YAML file checked by a strict zod schema, one problem per key: zod reports
 * all unknown keys of a mapping in one issue, but each typo is written on its own line and gets
 * its own "did you mean" (the allowed key closest by edit distance). A key that is missing only
 * because it was misspelt (or a refinement that fails only because of it) is not reported
 * twice: the "did you mean" says it.
 */
import { closest, distance } from "fastest-levenshtein";
import { z } from "zod";
import { valueAtPath } from "./yaml-source.js";

/** One key the schema does not allow. */
export interface UnknownKey {
  /** Path of the mapping that holds the key. */
  path: readonly PropertyKey[];
  key: string;
  /** The allowed key it is probably a misspelling of, or null. */
  suggestion: string | null;
  /** The keys that mapping allows (empty when the schema cannot say). */
  allowed: string[];
}

export interface SplitIssues {
  /** Every unknown key, one per key, in the order zod reported them. */
  unknownKeys: UnknownKey[];
  /** The other issues, without a missing key that an unknown key beside it is a misspelling of. */
  others: z.core.$ZodIssue[];
}

/** Splits a failed parse's issues as the header says. Pure. */
export function splitSchemaIssues(issues: readonly z.core.$ZodIssue[], schema: z.ZodType, data: unknown): SplitIssues {
  const unknownKeys: UnknownKey[] = issues.flatMap((issue) => {
    if (issue.code !== "unrecognized_keys") return [];
    const allowed = allowedKeysAt(schema, data, issue.path);
    const present = valueAtPath(data, issue.path);
    const absent = allowed.filter((key) => typeof present !== "object" || present === null || !(key in present));
    return issue.keys.map((key) => ({ path: issue.path, key, suggestion: closestKey(key, absent) ?? closestKey(key, allowed), allowed }));
  });
  const misspelt = (issue: z.core.$ZodIssue): boolean => issue.path.length > 0
    && valueAtPath(data, issue.path) === undefined
    && unknownKeys.some((u) => u.suggestion === issue.path.at(-1) && samePath(u.path, issue.path.slice(0, -1)));
  // A refinement of the mapping that holds a misspelt key ("needs at least one of …") fails only
  // because of the typo: the "did you mean" says it.
  const refinedTypo = (issue: z.core.$ZodIssue): boolean => issue.code === "custom"
    && unknownKeys.some((u) => u.suggestion !== null && samePath(u.path, issue.path));
  return { unknownKeys, others: issues.filter((issue) => issue.code !== "unrecognized_keys" && !misspelt(issue) && !refinedTypo(issue)) };
}

/**
 * The allowed key `key` is probably a misspelling of: one with two neighbouring letters swapped,
 * else the closest by edit distance, within one edit for keys of up to three letters, else within
 * two or a third of its length.
 */
export function closestKey(key: string, allowed: readonly string[]): string | null {
  if (allowed.length === 0) return null;
  const swapped = allowed.find((candidate) => isAdjacentSwap(key, candidate));
  if (swapped !== undefined) return swapped;
  const best = closest(key, [...allowed]);
  const limit = best.length <= 3 ? 1 : Math.max(2, Math.floor(best.length / 3));
  return distance(key, best) <= limit ? best : null;
}

/** `sya` for `say`: two neighbouring letters swapped (one typo, though two edits). */
function isAdjacentSwap(a: string, b: string): boolean {
  if (a.length !== b.length || a === b) return false;
  const diff = [...a].flatMap((ch, i) => (ch === b[i] ? [] : [i]));
  return diff.length === 2 && diff[1] === diff[0]! + 1 && a[diff[0]!] === b[diff[1]!] && a[diff[1]!] === b[diff[0]!];
}

/** The keys the schema allows for the object at `path` in `data` (unions resolved by their literal fields). */
export function allowedKeysAt(schema: z.ZodType, data: unknown, path: readonly PropertyKey[]): string[] {
  let current: z.ZodType | undefined = schema;
  const segments = [...path, null];
  for (const [index, segment] of segments.entries()) {
    current = unwrap(current);
    if (current instanceof z.ZodUnion) current = unwrap(pickUnionOption(current, valueAtPath(data, path.slice(0, index))));
    if (segment === null) break;
    if (current instanceof z.ZodObject) current = current.shape[String(segment)] as z.ZodType | undefined;
    else if (current instanceof z.ZodArray) current = current.element as z.ZodType;
    else return [];
  }
  return current instanceof z.ZodObject ? Object.keys(current.shape) : [];
}

function samePath(a: readonly PropertyKey[], b: readonly PropertyKey[]): boolean {
  return a.length === b.length && a.every((segment, i) => String(segment) === String(b[i]));
}

/** Through optional and refinement wrappers (zod 4 keeps refinements on the object itself). */
function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodNullable || current instanceof z.ZodDefault) {
    current = current.unwrap() as z.ZodType;
  }
  if (current instanceof z.ZodPipe) return unwrap(current.in as z.ZodType);
  return current;
}

/** The union member the data was meant for: the object option whose literal fields match. */
function pickUnionOption(union: z.ZodUnion, value: unknown): z.ZodType | undefined {
  const objects = (union.options as z.ZodType[]).filter((o): o is z.ZodObject => o instanceof z.ZodObject);
  return objects.find((option) => literalFieldsMatch(option, value)) ?? objects[0];
}

function literalFieldsMatch(option: z.ZodObject, value: unknown): boolean {
  const literals = Object.entries(option.shape as Record<string, z.ZodType>)
    .filter(([, field]) => field instanceof z.ZodLiteral || field instanceof z.ZodEnum);
  return literals.length > 0 && literals.every(([name, field]) => field.safeParse(valueAtPath(value, [name])).success);
}
