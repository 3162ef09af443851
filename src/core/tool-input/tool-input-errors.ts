/**
 * What is wrong with a tool call's input, in words the model can act on: each problem says
 * what was expected and what was got (``` `path` must be a string (got 42) ```, ``` unknown
 * field `pth` (did you mean `path`?) ```). Pure: it reads ajv's error objects (compiled with
 * `verbose`, so each carries the data it judged) and writes text.
 */
import type { ErrorObject } from "ajv";
import { distance } from "fastest-levenshtein";

/** Problems listed before the rest are counted. */
const MAX_PROBLEMS = 8;
/** Longer shown values are cut. */
const MAX_SHOWN_CHARS = 60;

/**
 * The problems of one failed validation, joined by "; ", most useful first: wrong values,
 * then missing fields, then unknown ones. `subject` names the root ("the input").
 */
export function describeSchemaErrors(errors: readonly ErrorObject[], subject = "the input"): string {
  const kept = withoutBranchNoise(errors);
  const texts = [...new Set(kept.map((e) => ({ rank: rankOf(e), text: describeOne(e, subject) }))
    .sort((a, b) => a.rank - b.rank)
    .map((p) => p.text))];
  const shown = texts.slice(0, MAX_PROBLEMS);
  const more = texts.length - shown.length;
  return shown.join("; ") + (more > 0 ? `; and ${more} more problem${more === 1 ? "" : "s"}` : "");
}

/**
 * An anyOf/oneOf failure is said once: its branches' own errors are dropped, and so is its
 * generic "must match one of the allowed forms" when a plainer error names the same value
 * (a branch reached through `$ref` reports under the referenced path, e.g. the enum of types).
 * An `if` failure is explained by its then/else errors.
 */
function withoutBranchNoise(errors: readonly ErrorObject[]): ErrorObject[] {
  const isBranchFailure = (e: ErrorObject) => e.keyword === "anyOf" || (e.keyword === "oneOf" && e.params.passingSchemas == null);
  const prefixes = errors.filter(isBranchFailure).map((e) => `${e.schemaPath}/`);
  const kept = errors.filter((e) => e.keyword !== "if" && !prefixes.some((p) => e.schemaPath.startsWith(p)));
  return kept.filter((e) => !isBranchFailure(e) || !kept.some((o) => o !== e && !isBranchFailure(o) && o.instancePath === e.instancePath));
}

function rankOf(e: ErrorObject): number {
  if (e.keyword === "required" || e.keyword === "dependentRequired" || e.keyword === "dependencies") return 1;
  if (e.keyword === "additionalProperties" || e.keyword === "unevaluatedProperties") return 2;
  return 0;
}

function describeOne(e: ErrorObject, subject: string): string {
  const at = fieldPath(e.instancePath);
  const name = at === "" ? subject : `\`${at}\``;
  const got = ` (got ${show(e.data)})`;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "type":
      return `${name} must be ${typeWords(p.type)}${got}`;
    case "required":
      return `${quoted(join(at, String(p.missingProperty)))} is required`;
    case "dependentRequired":
    case "dependencies":
      return `${quoted(join(at, String(p.missingProperty)))} is required when ${quoted(join(at, String(p.property)))} is given`;
    case "additionalProperties":
    case "unevaluatedProperties":
      return unknownField(at, String(p.additionalProperty ?? p.unevaluatedProperty), e);
    case "enum":
      return `${name} must be one of ${(p.allowedValues as unknown[]).map(show).join(", ")}${got}`;
    case "const":
      return `${name} must be ${show(p.allowedValue)}${got}`;
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `${name} must be ${rangeWords(e)}${got}`;
    case "multipleOf":
      return `${name} must be a multiple of ${String(p.multipleOf)}${got}`;
    case "minLength":
      return `${name} must be at least ${String(p.limit)} characters long${got}`;
    case "maxLength":
      return `${name} must be at most ${String(p.limit)} characters long${got}`;
    case "pattern":
      return `${name} must match the pattern /${String(p.pattern)}/${got}`;
    case "minItems":
      return `${name} must have at least ${String(p.limit)} items${got}`;
    case "maxItems":
      return `${name} must have at most ${String(p.limit)} items${got}`;
    case "uniqueItems":
      return `${name} must not repeat items (items ${String(p.j)} and ${String(p.i)} are the same)`;
    case "anyOf":
    case "oneOf":
      return p.passingSchemas == null
        ? `${name} must match one of the allowed forms${got}`
        : `${name} matches more than one of the allowed forms${got}`;
    case "false schema":
      return `${name} is not allowed`;
    default:
      return `${name} ${e.message ?? "is not valid"}${got}`;
  }
}

/** `unknown field `pth` (did you mean `path`?)`, else the fields there are. */
function unknownField(at: string, field: string, e: ErrorObject): string {
  const properties = (e.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  const known = Object.keys(properties);
  const near = closestName(field, known);
  const hint = near !== undefined ? ` (did you mean \`${near}\`?)` : known.length > 0 ? ` (fields: ${known.join(", ")})` : "";
  return `unknown field ${quoted(join(at, field))}${hint}`;
}

/**
 * The known name a mistyped one most likely meant: within a third of its length in edits,
 * case, `_` and `-` aside (`replace_all` → `replaceAll`, `pth` → `path`); undefined when none is.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const fold = (s: string) => s.toLowerCase().replace(/[_-]/g, "");
  let best: { name: string; d: number } | undefined;
  for (const k of known) {
    const d = distance(fold(name), fold(k));
    if (d <= Math.max(1, Math.floor(Math.max(name.length, k.length) / 3)) && (best === undefined || d < best.d)) best = { name: k, d };
  }
  return best?.name;
}

/** "an integer from 1 to 2000", "from 1 and up", "greater than 0": the bounds the schema sets. */
function rangeWords(e: ErrorObject): string {
  const s = (e.parentSchema ?? {}) as Record<string, unknown>;
  const low = typeof s.minimum === "number" ? s.minimum : undefined;
  const high = typeof s.maximum === "number" ? s.maximum : undefined;
  const kind = s.type === "integer" ? "an integer " : s.type === "number" ? "a number " : "";
  if (low !== undefined && high !== undefined) return `${kind}from ${low} to ${high}`;
  const limit = String((e.params as { limit?: unknown }).limit);
  switch (e.keyword) {
    case "minimum": return `${kind}from ${limit} and up`;
    case "maximum": return `${kind}up to ${limit}`;
    case "exclusiveMinimum": return `${kind}greater than ${limit}`;
    default: return `${kind}less than ${limit}`;
  }
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: "a string", integer: "an integer", number: "a number", boolean: "true or false",
  object: "an object", array: "a list", null: "null",
};

function typeWords(type: unknown): string {
  const types = Array.isArray(type) ? type.map(String) : String(type).split(",");
  return types.map((t) => TYPE_WORDS[t] ?? t).join(" or ");
}

/** `/edits/0/old` → `edits[0].old` (JSON Pointer unescaped). */
function fieldPath(pointer: string): string {
  if (pointer === "") return "";
  return pointer.slice(1).split("/").map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path === "" ? part : `${path}.${part}`), "");
}

function join(at: string, field: string): string {
  return at === "" ? field : `${at}.${field}`;
}

function quoted(path: string): string {
  return `\`${path}\``;
}

/** A value as JSON, cut when long: `42`, `"42"`, `null`. */
function show(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text;
}
