/**
 * A task's `output.schema` (docs/tasks.md "Structured output"): read from its file or taken
 * inline, and judged usable before anything runs — valid JSON, a JSON Schema ajv compiles
 * (2020-12, or draft-07 when its `$schema` says so), describing an object, since it becomes the
 * input schema of the `final_answer` tool and both providers take only object inputs. Each
 * problem is one sentence; task-file.ts locates it at `output.schema`.
 */
import { errorMessage } from "../../core/errors.js";
import { sharedSchemaCompiler } from "../../core/tool-input/tool-input-check.js";
import { readRegularFile } from "../../store/input-file.js";

/** The schema in the file at `path` (absolute), or why it cannot be read as one. */
export async function readOutputSchemaFile(path: string): Promise<{ schema: Record<string, unknown> } | { problem: string }> {
  let text: string;
  try {
    text = (await readRegularFile(path)).toString("utf8");
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === "ENOENT") return { problem: `schema file not found: ${path}` };
    if (code === "EISDIR") return { problem: `not a file but a folder: ${path}` };
    return { problem: `cannot read the schema file: ${errorMessage(err)}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `not JSON: ${errorMessage(err)}: ${path}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { problem: `a JSON Schema is an object, but the file holds ${Array.isArray(value) ? "a list" : JSON.stringify(value)}: ${path}` };
  }
  return { schema: value as Record<string, unknown> };
}

/** Why `schema` cannot be a task's output schema, or null when it can. */
export function outputSchemaProblem(schema: Record<string, unknown>): string | null {
  try {
    sharedSchemaCompiler.compile(schema);
  } catch (err) {
    return errorMessage(err);
  }
  if (schema.type !== "object") {
    return `the schema must describe an object (type: object), got type ${JSON.stringify(schema.type) ?? "absent"}: it is the input schema of the final_answer tool, and tool inputs are objects (wrap a list or a value in a property)`;
  }
  return null;
}
