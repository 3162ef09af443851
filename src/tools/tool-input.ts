/**
 * Validation of a tool call's input object. Each reader throws a `ToolError` that names the
 * field and says what it got, so the model can correct the call. `null` counts as absent:
 * some models send it for optional fields.
 */
import { ToolError } from "../core/errors.js";

export type InputObject = Readonly<Record<string, unknown>>;

/** The input as an object with only the known `fields`, or a ToolError saying what is wrong. */
export function inputObject(input: unknown, fields: readonly string[]): InputObject {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new ToolError(`Expected the input to be an object with fields ${fields.join(", ")}, got ${show(input)}`);
  }
  for (const key of Object.keys(input)) {
    if (!fields.includes(key)) throw new ToolError(`Unknown field \`${key}\`; expected ${fields.join(", ")}`);
  }
  return input as InputObject;
}

export function requiredString(obj: InputObject, field: string): string {
  const value = obj[field];
  if (value === undefined || value === null) throw new ToolError(`\`${field}\` is required`);
  if (typeof value !== "string") throw new ToolError(`Expected \`${field}\` to be a string, got ${show(value)}`);
  return value;
}

export function optionalString(obj: InputObject, field: string): string | undefined {
  const value = obj[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new ToolError(`Expected \`${field}\` to be a string, got ${show(value)}`);
  return value;
}

export function optionalBoolean(obj: InputObject, field: string): boolean | undefined {
  const value = obj[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new ToolError(`Expected \`${field}\` to be true or false, got ${show(value)}`);
  return value;
}

/** An optional integer within [min, max] (no upper bound when `max` is absent). */
export function optionalInteger(obj: InputObject, field: string, range: { min: number; max?: number }): number | undefined {
  const value = obj[field];
  if (value === undefined || value === null) return undefined;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  if (typeof value !== "number" || !Number.isInteger(value) || value < range.min || value > max) {
    const span = range.max === undefined ? `from ${range.min} and up` : `from ${range.min} to ${range.max}`;
    throw new ToolError(`Expected \`${field}\` to be an integer ${span}, got ${show(value)}`);
  }
  return value;
}

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value) ?? String(value);
  return `\`${text.length > 60 ? `${text.slice(0, 60)}…` : text}\``;
}
