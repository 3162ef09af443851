/**
 * A matrix's cells applied to tasks (issue 22): each task × cell becomes a task of its own, keyed
 * `suite/id@variant`, whose settings are the task's with the cell's axes laid over them — the
 * matrix overrides the task (a model matrix must never silently do nothing), except on the axes the
 * task pins (`pin: [model]`). Its content hash covers the overrides it took, so a cell changed on
 * resume is a changed task. Problems a run cannot start with are `usage` errors (exit 2), all
 * together: a task outside the matrix file's folder, a remote model on a scripted task (it has no
 * prompt for a model to answer: its script is the test), a scripted model on a task with no script.
 */
import { createHash } from "node:crypto";
import { isAbsolute, relative } from "node:path";
import { RhemaError } from "../../core/errors.js";
import type { NamedProviderName, ScriptedProviderName } from "../../providers/provider-registry.js";
import { parseLimitMs } from "./duration.js";
import { cellOverrides, overridesHash, type CellBudget, type MatrixCell, type MatrixFile } from "./matrix-file.js";
import type { TaskDefinition } from "./task-file.js";
import { taskKey } from "./task-key.js";
import type { MatrixAxis } from "./task-schema.js";

/** What the manifest keeps of a cell: its id, its overrides and their hash, and its budget (not hashed: raising it continues stopped trials). */
export interface CellRecord {
  variant: string;
  overrides: Record<string, unknown>;
  hash: string;
  budget?: CellBudget;
}

export interface VariantTasks {
  /** Every task × cell, each with `variant` set, sorted by suite, id, variant. */
  tasks: TaskDefinition[];
  /** The matrix's cells as the manifest records them, in the matrix's order. */
  cells: CellRecord[];
  /** Per task key (`suite/id`), the axes it pins among those the matrix has. */
  pinned: Map<string, MatrixAxis[]>;
}

/** Applies every cell of `matrix` to every task; throws (exit 2) listing every task a cell cannot apply to. */
export function variantTasks(tasks: readonly TaskDefinition[], matrix: MatrixFile): VariantTasks {
  const problems: string[] = [];
  const out: TaskDefinition[] = [];
  const pinned = new Map<string, MatrixAxis[]>();
  const axes = new Set(matrix.cells.flatMap((cell) => cell.values.map((v) => v.axis)));
  for (const task of tasks) {
    const rel = relative(matrix.scope, task.file);
    if (rel.startsWith("..") || isAbsolute(rel)) {
      problems.push(`${task.file}: the task is outside the matrix's folder ${matrix.scope} (a matrix file applies to the tasks at or below its folder)`);
      continue;
    }
    const pins = (task.pin ?? []).filter((axis) => axes.has(axis));
    if (pins.length > 0) pinned.set(taskKey(task), pins);
    for (const cell of matrix.cells) {
      const applied = applyCell(task, cell);
      if (typeof applied === "string") {
        if (!problems.includes(applied)) problems.push(applied);
      } else out.push(applied);
    }
  }
  if (problems.length > 0) throw new RhemaError("usage", `${matrix.file}: the matrix cannot run these tasks:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  return {
    tasks: out,
    cells: matrix.cells.map((cell) => {
      const overrides = cellOverrides(cell);
      return { variant: cell.id, overrides, hash: overridesHash(overrides), ...(cell.budget !== undefined ? { budget: cell.budget } : {}) };
    }),
    pinned,
  };
}

/** The task as `cell` runs it, or why it cannot be. */
export function applyCell(task: TaskDefinition, cell: MatrixCell): TaskDefinition | string {
  const pins = new Set(task.pin ?? []);
  const variant: TaskDefinition = { ...task, limits: { ...task.limits }, variant: cell.id, ...(cell.budget !== undefined ? { cellBudget: { ...cell.budget } } : {}) };
  const applied: Record<string, unknown> = {};
  for (const value of cell.values) {
    if (pins.has(value.axis)) continue;
    switch (value.axis) {
      case "model": {
        const scriptedTask = task.model !== null && "script" in task.model;
        if ("scripted" in value.model) {
          if (!scriptedTask) return `${task.file}: the model value "${value.id}" is scripted, and this task has no script (pin: [model] keeps the task's own model)`;
          const model = task.model as Extract<TaskDefinition["model"], { script: unknown }>;
          const { priceAs: _priceAs, ...rest } = model;
          variant.model = { ...rest, provider: value.model.provider as ScriptedProviderName, ...(value.model.priceAs !== undefined ? { priceAs: value.model.priceAs } : {}) };
        } else {
          if (scriptedTask) {
            return `${task.file}: the model value "${value.id}" (${value.model.provider}/${value.model.name}) is a remote model, and this task is scripted: ` +
              "its script answers, not a model (give it a scripted model value, or pin: [model] to keep its script)";
          }
          variant.model = { provider: value.model.provider as NamedProviderName, name: value.model.name, ...(value.model.baseUrl !== undefined ? { baseUrl: value.model.baseUrl } : {}) };
        }
        applied.model = value.model;
        break;
      }
      case "transcript":
        variant.transcript = { ...task.transcript, ...value.transcript } as TaskDefinition["transcript"];
        applied.transcript = value.transcript;
        break;
      case "limits": {
        const l = value.limits;
        if (l.maxSteps !== undefined) variant.limits.maxSteps = l.maxSteps;
        if (l.timeout !== undefined) variant.limits.timeoutMs = parseLimitMs(l.timeout)!;
        if (l.streamIdle !== undefined) variant.limits.streamIdleMs = parseLimitMs(l.streamIdle)!;
        if (l.maxCostUsd !== undefined) variant.limits.maxCostUsd = l.maxCostUsd;
        if (l.maxTokens !== undefined) variant.limits.maxTokens = l.maxTokens;
        applied.limits = l;
        break;
      }
      case "policy":
        variant.policy = { kind: "file", path: value.policyFile };
        applied.policy = value.policyFile;
        break;
      case "sandbox":
        variant.sandbox = value.sandbox;
        applied.sandbox = value.sandbox;
        break;
      case "env":
        variant.env = { ...task.env, ...value.env };
        applied.env = value.env;
        break;
      case "mcp":
        variant.mcp = { ...task.mcp, ...value.resolved };
        applied.mcp = value.servers;
        break;
    }
  }
  const hash = overridesHash(applied);
  variant.contentHash = combined(task.contentHash, hash);
  if (task.fileBytesHash !== undefined) variant.fileBytesHash = combined(task.fileBytesHash, hash);
  return variant;
}

function combined(taskHash: string, cellHash: string): string {
  return createHash("sha256").update(`${taskHash}\n${cellHash}`).digest("hex");
}
