/**
 * The matrix file (`--matrix FILE`, issue 22): a suite-level file whose top-level key `matrix`
 * tells its role (suite discovery lists it apart and never loads it as a task). Its scope is its
 * folder: it applies to the tasks at or below it. Its axes override task settings, each value
 * carrying an `id`; `include`/`exclude` work like GitHub Actions' matrix; each resulting cell is
 * a variant, named `axis=id` joined by `,` in axis order (`model=sonnet,transcript=64k`).
 *
 *   matrix:
 *     model:
 *       - { id: sonnet, provider: anthropic, name: claude-sonnet-4-6 }
 *       - { id: local, provider: openai, name: llama3.1:8b, baseUrl: "http://localhost:11434/v1" }
 *     transcript:
 *       - { id: 8k, budgetTokens: 8000 }
 *       - { id: 64k, budgetTokens: 64000 }
 *     exclude:
 *       - { model: local, transcript: 64k }
 *     include:
 *       - { model: local, transcript: 8k }
 *       - { model: sonnet, budget: { maxCostUsd: 2 } }   # each sonnet cell's trials: $2 together
 *
 * Read by yaml-source and a strict zod schema; every problem is `file:line:column: field: message`
 * in a `MatrixFileError` (exit 2, nothing run).
 */
import { createHash } from "node:crypto";
import type { CacheTtlSetting } from "../../core/transcript-types.js";
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { errorMessage, throwIfMachineLimit } from "../../core/errors.js";
import { readRegularFile } from "../../store/input-file.js";
import { looksSecret } from "../../process/secret-env.js";
import { NAMED_PROVIDERS, SCRIPTED_PROVIDERS } from "../../providers/provider-registry.js";
import { YamlFileError, checkYamlFile, topLevelKeys } from "../../yaml-source/checked-yaml.js";
import { type SourcePosition, type YamlSource } from "../../yaml-source/yaml-source.js";
import { canonicalJson } from "./content-hash.js";
import { MATRIX_AXES, limitsSchema, mcpSchema, remoteModelSchema, transcriptSchema, type MatrixAxis, type TaskFileContent } from "./task-schema.js";
import { taskMcpServers, type TaskMcpServer } from "./task-mcp.js";

/** An axis value's id: what the variant id names it by. */
export const AXIS_VALUE_ID_PATTERN = /^[A-Za-z0-9._-]+$/;
const axisValueId = z.string({ error: "expected id as a string" })
  .max(40, { error: "an id is at most 40 characters" })
  .regex(AXIS_VALUE_ID_PATTERN, { error: "an id uses letters, digits, '.', '_' and '-'" })
  .describe("The value's name in variant ids (`axis=id`).");

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const modelValueSchema = z.union([
  remoteModelSchema.extend({ id: axisValueId }),
  z.strictObject({
    id: axisValueId,
    provider: z.enum(SCRIPTED_PROVIDERS),
    priceAs: z.string().trim().min(1, { error: "priceAs is empty" }).optional()
      .describe("Price the scripted task's requests as this model."),
  }),
], { error: `expected a model {id, provider, name, baseUrl?} (provider ${[...NAMED_PROVIDERS].join(", ")}) or {id, provider: ${SCRIPTED_PROVIDERS.join("|")}, priceAs?}` })
  .describe("A model: a named provider's model (through the provider registry), or the task's own script priced as `priceAs`.");

const axesShape = {
  model: z.array(modelValueSchema).min(1, { error: "an axis lists at least one value" }).optional(),
  transcript: z.array(transcriptSchema.extend({ id: axisValueId })).min(1, { error: "an axis lists at least one value" }).optional(),
  limits: z.array(limitsSchema.extend({ id: axisValueId })).min(1, { error: "an axis lists at least one value" }).optional(),
  policy: z.array(z.strictObject({
    id: axisValueId,
    file: z.string().trim().min(1, { error: "file is empty" }).describe("A policy file, relative to the matrix file."),
  })).min(1, { error: "an axis lists at least one value" }).optional(),
  sandbox: z.array(z.strictObject({
    id: axisValueId,
    mode: z.enum(["auto", "bwrap", "off"], { error: "expected mode as auto, bwrap or off" }),
  })).min(1, { error: "an axis lists at least one value" }).optional(),
  env: z.array(z.strictObject({
    id: axisValueId,
    vars: z.record(z.string().regex(ENV_NAME, { error: "a variable name is letters, digits and '_', not starting with a digit" }), z.string({ error: "expected a variable's value as a string (quote numbers)" }))
      .describe("Variables set for the task's setup and checks."),
  })).min(1, { error: "an axis lists at least one value" }).optional(),
  mcp: z.array(z.strictObject({
    id: axisValueId,
    servers: mcpSchema.describe("MCP servers laid over the task's `mcp:` by name (the same shape); {} adds none."),
  })).min(1, { error: "an axis lists at least one value" }).optional(),
} satisfies Record<MatrixAxis, z.ZodType>;

/** A partial cell: an axis → a value id, as `include` and `exclude` entries name it. */
const cellRefShape = Object.fromEntries(MATRIX_AXES.map((axis) => [axis, axisValueId.optional()])) as Record<MatrixAxis, z.ZodOptional<typeof axisValueId>>;

/** A cell's budget: the dollars (or tokens) all its trials, across tasks, may spend together. */
const cellBudgetSchema = z.strictObject({
  maxCostUsd: limitsSchema.shape.maxCostUsd
    .describe("Dollars all the cell's trials (every task's, every repeat's, earlier runs' included) may spend together: once spent, its trials stop before their next request and none starts, resumably (status stopped). Needs priced models."),
  maxTokens: limitsSchema.shape.maxTokens
    .describe("Tokens (input + cache reads + cache writes + output) all the cell's trials may spend together, likewise."),
}, { error: "expected budget as a mapping with maxCostUsd and/or maxTokens" })
  .refine((b) => b.maxCostUsd !== undefined || b.maxTokens !== undefined, { error: "a budget names maxCostUsd or maxTokens" });

export const matrixFileSchema = z.strictObject({
  matrix: z.strictObject({
    ...axesShape,
    include: z.array(z.strictObject({ ...cellRefShape, budget: cellBudgetSchema.optional() })).optional()
      .describe("Cells to add: an entry matching no cell of the product is a cell of its own (GitHub Actions' matrix include). " +
        "An entry's `budget` caps each cell it matches (an entry naming no axis value matches every cell); several on one cell: the smallest holds."),
    exclude: z.array(z.strictObject(cellRefShape)).optional()
      .describe("Cells to leave out: every cell matching all of an entry's axis ids."),
  }, { error: "expected matrix as a mapping of axes (model, transcript, limits, policy, sandbox, env, mcp), include and exclude" }),
}).meta({ title: "rhema matrix file", description: "Variants of a suite: each cell overrides task settings; trials are task × variant × repeat." });

export type MatrixFileContent = z.infer<typeof matrixFileSchema>;

/** The published JSON Schema of a matrix file. */
export function matrixJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(matrixFileSchema, { target: "draft-2020-12" }) as Record<string, unknown>;
}

/** One axis value as a cell applies it: its axis, its id, and its settings (paths absolute). */
export type AxisValue =
  | { axis: "model"; id: string; model: { provider: string; name: string; baseUrl?: string } | { provider: string; scripted: true; priceAs?: string } }
  | { axis: "transcript"; id: string; transcript: { blockTokens?: number; budgetTokens?: number; cacheTtl?: CacheTtlSetting; worker?: { provider: string; name: string } } }
  | { axis: "limits"; id: string; limits: z.infer<typeof limitsSchema> }
  | { axis: "policy"; id: string; policyFile: string }
  | { axis: "sandbox"; id: string; sandbox: "auto" | "bwrap" | "off" }
  | { axis: "env"; id: string; env: Record<string, string> }
  /** `servers` as written (what the manifest keeps and the hash covers); `resolved` as the trial starts them. */
  | { axis: "mcp"; id: string; servers: Record<string, unknown>; resolved: Record<string, TaskMcpServer> };

/** What all the trials of a cell may spend together (an absent measure: no limit). */
export interface CellBudget {
  maxCostUsd?: number;
  maxTokens?: number;
}

/** A cell of the matrix: a variant. */
export interface MatrixCell {
  /** `axis=id` joined by `,` in axis order. */
  id: string;
  /** Its value on each axis it has, in axis order. */
  values: AxisValue[];
  /** Its budget (the `include` entries' that match it, the smallest of each measure); absent: none. */
  budget?: CellBudget;
}

export interface MatrixFile {
  /** Absolute. */
  file: string;
  /** The folder whose tasks (at or below it) it applies to. */
  scope: string;
  cells: MatrixCell[];
}

/** One thing wrong with a matrix file, located at the offending field. */
export interface MatrixProblem extends SourcePosition {
  file: string;
  field: string;
  message: string;
}

export class MatrixFileError extends YamlFileError<MatrixProblem> {}

/**
 * Whether a parsed YAML document's top level is a matrix file: a mapping with `matrix` and no
 * `prompt`. Suite discovery lists such a file apart, never as a task.
 */
export function isMatrixDocument(yaml: YamlSource): boolean {
  const keys = topLevelKeys(yaml);
  return keys !== null && keys.has("matrix") && !keys.has("prompt");
}

/** Reads and validates the matrix file at `file` (absolute). */
export async function loadMatrixFile(file: string): Promise<MatrixFile> {
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(file);
  } catch (err) {
    throwIfMachineLimit(err);
    throw new MatrixFileError([{ file, line: 1, column: 1, field: "file", message: `cannot read the matrix file: ${errorMessage(err)}` }], { cause: err });
  }
  return parseMatrixText(bytes, file);
}

/** Parses and validates a matrix file's text (`file` absolute: paths in it are relative to its folder). */
export function parseMatrixText(text: string | Uint8Array, file: string): MatrixFile {
  const checked = checkYamlFile(text, file, { schema: matrixFileSchema, what: "the matrix file", needs: "a top-level `matrix:` of axes" });
  if (!checked.ok) throw new MatrixFileError(checked.problems);
  const { value, yaml } = checked;
  const problem = (at: SourcePosition, field: string, message: string): MatrixProblem => ({ file, line: at.line, column: at.column, field, message });
  const cells = matrixCells(value, dirname(file), (path, message) => problem(yaml.locateValue(path), path.join("."), message));
  if ("problems" in cells) throw new MatrixFileError(cells.problems);
  return { file, scope: dirname(file), cells: cells.cells };
}

type Problem = (path: (string | number)[], message: string) => MatrixProblem;

/** The cells of a checked matrix: the product of its axes, less `exclude`, plus `include` (pure). */
export function matrixCells(content: MatrixFileContent, folder: string, problem: Problem): { cells: MatrixCell[] } | { problems: MatrixProblem[] } {
  const problems: MatrixProblem[] = [];
  const axes = new Map<MatrixAxis, AxisValue[]>();
  for (const axis of MATRIX_AXES) {
    const listed = content.matrix[axis];
    if (listed === undefined) continue;
    const values: AxisValue[] = [];
    const seen = new Set<string>();
    listed.forEach((raw, index) => {
      if (seen.has(raw.id)) problems.push(problem(["matrix", axis, index, "id"], `duplicate id "${raw.id}" on axis ${axis}`));
      seen.add(raw.id);
      const value = axisValue(axis, raw, folder);
      if (value.axis === "mcp") {
        value.resolved = taskMcpServers(value.servers as NonNullable<TaskFileContent["mcp"]>, ["matrix", axis, index, "servers"], (path) => problem(path, ""));
      }
      if (value.axis === "env") {
        for (const name of Object.keys(value.env)) {
          if (looksSecret(name, value.env[name])) {
            problems.push(problem(["matrix", axis, index, "vars", name], `${name} looks like a secret: a matrix value is written to the run directory; pass a secret through the environment and --allow-env instead`));
          }
        }
      }
      values.push(value);
    });
    axes.set(axis, values);
  }
  const refProblem = (entry: Partial<Record<MatrixAxis, string>>, path: (string | number)[]): boolean => {
    let bad = false;
    for (const axis of MATRIX_AXES) {
      const id = entry[axis];
      if (id === undefined) continue;
      const values = axes.get(axis);
      if (values === undefined) {
        problems.push(problem([...path, axis], `the matrix has no ${axis} axis`));
        bad = true;
      } else if (!values.some((v) => v.id === id)) {
        problems.push(problem([...path, axis], `${axis} has no value "${id}" (it has ${values.map((v) => v.id).join(", ")})`));
        bad = true;
      }
    }
    return bad;
  };
  (content.matrix.exclude ?? []).forEach((entry, i) => {
    refProblem(entry, ["matrix", "exclude", i]);
    if (MATRIX_AXES.every((axis) => entry[axis] === undefined)) problems.push(problem(["matrix", "exclude", i], "an exclude entry names at least one axis value"));
  });
  (content.matrix.include ?? []).forEach((entry, i) => {
    refProblem(entry, ["matrix", "include", i]);
    if (MATRIX_AXES.every((axis) => entry[axis] === undefined) && entry.budget === undefined) {
      problems.push(problem(["matrix", "include", i], "an include entry names at least one axis value, or a budget for every cell"));
    }
  });
  if (problems.length > 0) return { problems };

  // The product, in axis order (the first axis varies slowest).
  let combos: AxisValue[][] = axes.size === 0 ? [] : [[]];
  for (const values of axes.values()) combos = combos.flatMap((combo) => values.map((v) => [...combo, v]));
  const matches = (combo: readonly AxisValue[], entry: Partial<Record<MatrixAxis, string>>) =>
    MATRIX_AXES.every((axis) => entry[axis] === undefined || combo.some((v) => v.axis === axis && v.id === entry[axis]));
  const excludes = content.matrix.exclude ?? [];
  const cells = combos.filter((combo) => !excludes.some((entry) => matches(combo, entry))).map((values) => ({ values }));
  const includes = content.matrix.include ?? [];
  for (const entry of includes) {
    // An entry naming no axis value only carries a budget for every cell: it is never a cell of its own.
    if (MATRIX_AXES.every((axis) => entry[axis] === undefined)) continue;
    if (cells.some((cell) => matches(cell.values, entry))) continue;
    cells.push({ values: MATRIX_AXES.flatMap((axis) => (entry[axis] === undefined ? [] : [axes.get(axis)!.find((v) => v.id === entry[axis])!])) });
  }
  const named = cells.map((cell): MatrixCell => {
    const budget = cellBudget(includes.filter((entry) => matches(cell.values, entry)).flatMap((entry) => entry.budget ?? []));
    return { id: cell.values.map((v) => `${v.axis}=${v.id}`).join(","), values: cell.values, ...(budget !== null ? { budget } : {}) };
  });
  if (named.length === 0) return { problems: [problem(["matrix"], "the matrix has no cell: name an axis with values, or include a cell")] };
  return { cells: named };
}

/** The budget of a cell that `budgets` (its matching include entries') all cap: the smallest of each measure; null for none. */
export function cellBudget(budgets: readonly CellBudget[]): CellBudget | null {
  const smallest = (measure: keyof CellBudget): number | undefined => {
    const given = budgets.flatMap((b) => b[measure] ?? []);
    return given.length === 0 ? undefined : Math.min(...given);
  };
  const maxCostUsd = smallest("maxCostUsd");
  const maxTokens = smallest("maxTokens");
  if (maxCostUsd === undefined && maxTokens === undefined) return null;
  return { ...(maxCostUsd !== undefined ? { maxCostUsd } : {}), ...(maxTokens !== undefined ? { maxTokens } : {}) };
}

function axisValue(axis: MatrixAxis, raw: { id: string } & Record<string, unknown>, folder: string): AxisValue {
  const { id, ...rest } = raw;
  switch (axis) {
    case "model":
      return (SCRIPTED_PROVIDERS as readonly string[]).includes(rest.provider as string)
        ? { axis, id, model: { provider: rest.provider as string, scripted: true, ...(rest.priceAs !== undefined ? { priceAs: rest.priceAs as string } : {}) } }
        : { axis, id, model: rest as { provider: string; name: string; baseUrl?: string } };
    case "transcript": return { axis, id, transcript: rest as Extract<AxisValue, { axis: "transcript" }>["transcript"] };
    case "limits": return { axis, id, limits: rest as Extract<AxisValue, { axis: "limits" }>["limits"] };
    case "policy": return { axis, id, policyFile: resolve(folder, rest.file as string) };
    case "sandbox": return { axis, id, sandbox: rest.mode as "auto" | "bwrap" | "off" };
    case "env": return { axis, id, env: { ...(rest.vars as Record<string, string>) } };
    case "mcp": return { axis, id, servers: { ...(rest.servers as Record<string, unknown>) }, resolved: {} };
  }
}

/** A cell's overrides as the manifest keeps them: each axis's settings by axis (no ids, paths absolute). */
export function cellOverrides(cell: MatrixCell): Record<string, unknown> {
  const overrides: Record<string, unknown> = {};
  for (const value of cell.values) {
    const { axis, id: _id, ...settings } = value;
    overrides[axis] = value.axis === "mcp" ? value.servers : Object.values(settings)[0];
  }
  return overrides;
}

/**
 * The hash of what a cell changes in a task, over the overrides it applies (`applied`), without
 * `limits`: as with a task's own limits, raising one continues a stopped
 * trial instead of refusing it as changed.
 */
export function overridesHash(applied: Record<string, unknown>): string {
  const { limits: _limits, ...hashed } = applied;
  return createHash("sha256").update(canonicalJson(hashed)).digest("hex");
}
