/**
 * Tool input, validated once: each tool's `spec.inputSchema` (JSON Schema 2020-12, or
 * draft-07 when its `$schema` says so) is compiled with ajv when the tool set is assembled (a
 * built-in tool's, known good, at its first call), and
 * the step loop checks every call against it before `plan()`. A schema ajv cannot compile is an
 * `invalid_config` error naming the tool; input that does not match is one error text the
 * model reads (tool-input-errors.ts). `null` for an optional field counts as absent (some
 * models send it), and so does a missing input object: both are dropped before the tool sees
 * the input, unless the schema itself accepts them.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { CodingAgentError, errorMessage } from "../errors.js";
import { describeSchemaErrors } from "./tool-input-errors.js";
import type { ToolSpec } from "../tool.js";

/** A call's input, checked: what the tool gets, or the error text the model reads. */
export type InputCheck = { ok: true; input: unknown } | { ok: false; message: string };

/** The compiled input checks of one tool set. */
export interface ToolInputChecks {
  /** Checks `input` against the schema of the tool named `tool` (one the set holds). */
  check(tool: string, input: unknown): InputCheck;
}

type Draft = "2020-12" | "draft-07";

const AJV_OPTIONS: Options = {
  allErrors: true,
  verbose: true, // errors carry the data they judged: "(got 42)"
  strict: false, // keywords ajv does not know (annotations, vendor extensions) are ignored, as JSON Schema says
  logger: false, // the library never prints
  addUsedSchema: false, // two tools may use the same $id
  validateSchema: false, // done explicitly, so a bad schema gets our words
};

/**
 * Compiles JSON Schemas to validators, each distinct schema once: compiling costs
 * milliseconds and a run assembles the same built-in tools for every task, so compiled
 * validators are kept by the schema's JSON text (a bounded cache; it holds only pure functions).
 */
export class SchemaCompiler {
  private readonly engines = new Map<Draft, Ajv>();
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly maxCached = 512) {}

  /** How many validators are kept. */
  get size(): number {
    return this.compiled.size;
  }

  /**
   * The validator of `schema`; throws a plain Error saying what is wrong with the schema.
   * `metaCheck: false` skips validating the schema against its draft's meta-schema (the
   * costliest part of a first compile) for schemas known good, such as the built-in tools'.
   */
  compile(schema: Record<string, unknown>, opts: { metaCheck?: boolean } = {}): ValidateFunction {
    const key = JSON.stringify(schema);
    const hit = this.compiled.get(key);
    if (hit) return hit;
    const ajv = this.engine(draftOf(schema));
    if (opts.metaCheck !== false && !ajv.validateSchema(schema)) {
      throw new Error(`it is not valid JSON Schema: ${describeSchemaErrors(ajv.errors ?? [], "the schema")}`);
    }
    const validate = ajv.compile(schema);
    if (this.compiled.size >= this.maxCached) this.compiled.delete(this.compiled.keys().next().value!);
    this.compiled.set(key, validate);
    return validate;
  }

  private engine(draft: Draft): Ajv {
    let ajv = this.engines.get(draft);
    if (!ajv) {
      ajv = draft === "draft-07" ? new Ajv(AJV_OPTIONS) : new Ajv2020(AJV_OPTIONS);
      this.engines.set(draft, ajv);
    }
    return ajv;
  }
}

/**
 * The process's one compiler: `compileInputChecks` uses it when given none, and a task's `output:`
 * schema is checked and judged with it, so that schema (also `final_answer`'s input) compiles once.
 */
export const sharedSchemaCompiler = new SchemaCompiler();

export interface CompileInputChecksOptions {
  /** Default: one compiler per process. */
  compiler?: SchemaCompiler;
  /** Which schemas to validate against their meta-schema first; default all. */
  metaCheck?: (spec: ToolSpec) => boolean;
}

/**
 * Compiles the input schema of every tool in `specs`. Throws `CodingAgentError`
 * (`invalid_config`) naming the first tool whose schema cannot be compiled.
 */
export function compileInputChecks(specs: readonly ToolSpec[], opts: CompileInputChecksOptions = {}): ToolInputChecks {
  const compiler = opts.compiler ?? sharedSchemaCompiler;
  const checks = new Map<string, (input: unknown) => InputCheck>();
  for (const spec of specs) {
    const metaCheck = opts.metaCheck?.(spec) ?? true;
    // A schema that is meta-checked may be bad, and is compiled now so the error comes up front;
    // one known good (a built-in tool's) is compiled at its first call: milliseconds a schema that a
    // task's start (its first model request) need not wait for, and many tasks never call it.
    checks.set(spec.name, metaCheck ? compileOne(spec, compiler, true) : lazily(() => compileOne(spec, compiler, false)));
  }
  return {
    check(tool, input) {
      const check = checks.get(tool);
      if (!check) throw new Error(`no input check for the tool "${tool}"`);
      return check(input);
    },
  };
}

function lazily(compile: () => (input: unknown) => InputCheck): (input: unknown) => InputCheck {
  let compiled: ((input: unknown) => InputCheck) | null = null;
  return (input) => (compiled ??= compile())(input);
}

function compileOne(spec: ToolSpec, compiler: SchemaCompiler, metaCheck: boolean): (input: unknown) => InputCheck {
  const schema: unknown = spec.inputSchema;
  const bad = (why: string, cause?: unknown) =>
    new CodingAgentError("invalid_config", `the tool \`${spec.name}\` has an inputSchema that cannot be used: ${why}`, { cause });
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw bad(`expected a JSON Schema object, got ${JSON.stringify(schema) ?? String(schema)}`);
  }
  let validate: ValidateFunction;
  try {
    validate = compiler.compile(schema as Record<string, unknown>, { metaCheck });
  } catch (err) {
    throw bad(errorMessage(err), err);
  }
  return (input) => {
    const result = validateEased(validate, schema as Record<string, unknown>, input);
    return result.ok ? result : { ok: false, message: `Invalid input for \`${spec.name}\`: ${describeSchemaErrors(result.errors)}` };
  };
}

/**
 * The input as it stands when it matches; else with the absent-meaning nulls dropped, when
 * that matches. The errors reported are those of the eased input, so a null optional field
 * is never one of them.
 */
function validateEased(
  validate: ValidateFunction,
  schema: Record<string, unknown>,
  input: unknown,
): { ok: true; input: unknown } | { ok: false; errors: ErrorObject[] } {
  if (validate(input)) return { ok: true, input };
  const eased = withoutAbsentNulls(input, schema);
  if (eased !== input && validate(eased)) return { ok: true, input: eased };
  return { ok: false, errors: validate.errors ?? [] };
}

/** No input becomes `{}`; a top-level field that is null and not required is left out. */
export function withoutAbsentNulls(input: unknown, schema: Record<string, unknown>): unknown {
  if (input === null || input === undefined) return {};
  if (typeof input !== "object" || Array.isArray(input)) return input;
  const required = Array.isArray(schema.required) ? schema.required : [];
  const entries = Object.entries(input);
  const kept = entries.filter(([key, value]) => value !== null || required.includes(key));
  return kept.length === entries.length ? input : Object.fromEntries(kept);
}

function draftOf(schema: Record<string, unknown>): Draft {
  const uri = schema.$schema;
  if (uri === undefined) return "2020-12";
  const bare = typeof uri === "string" ? uri.replace(/#$/, "").replace(/^https?:\/\//, "") : "";
  if (bare === "json-schema.org/draft/2020-12/schema") return "2020-12";
  if (bare === "json-schema.org/draft-07/schema") return "draft-07";
  throw new Error(`its $schema ${JSON.stringify(uri)} is not one rhema reads (JSON Schema 2020-12 or draft-07)`);
}
