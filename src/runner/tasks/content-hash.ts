/**
 * A task's content hash: what tells a changed task from a resumed one. Two schemes, and the run
 * manifest records which one its hashes are in:
 *
 *   file-bytes   sha256 of the task file's bytes (run directories made before budgets): any edit,
 *                a comment or a raised limit included, makes the task "changed"
 *   content-v2   sha256 of the parsed task, keys sorted, without `limits` (maxSteps, timeout and
 *                the budgets: raising one continues a stopped task instead of refusing it) and
 *                without `model.priceAs` (it only changes what the requests are priced as, never
 *                what the model is sent), `repeats` and `pass` (how many trials run and what
 *                makes them pass: a larger N on resume adds trials), `pin` and `cassette` (how a
 *                cassette keys its requests); comments and formatting do not count either
 *
 * A run directory keeps the scheme it was made with, so an old one is compared as it was written.
 */
import { createHash } from "node:crypto";
import type { TaskFileContent } from "./task-schema.js";

export type ContentHashScheme = "file-bytes" | "content-v2";

/** The scheme new run directories are made with. */
export const CURRENT_HASH_SCHEME: ContentHashScheme = "content-v2";

/** The `file-bytes` hash, kept so run directories made before `content-v2` compare as they were written. */
export function fileBytesHash(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The `content-v2` hash of a parsed (schema-checked) task file; `loaded.outputSchema`: the content of a schema file it names. */
export function contentHash(content: TaskFileContent, loaded: { outputSchema?: unknown } = {}): string {
  const { limits: _limits, repeats: _repeats, pass: _pass, pin: _pin, cassette: _cassette, model, ...rest } = content;
  const hashed: Record<string, unknown> = { ...rest };
  // `output.schema` given as a file counts by the file's content (read by loadTaskFile), not its path.
  if (rest.output !== undefined && loaded.outputSchema !== undefined) hashed.output = { ...rest.output, schema: loaded.outputSchema };
  if (model !== undefined) {
    const { priceAs: _priceAs, ...kept } = model as Record<string, unknown>;
    hashed.model = kept;
  }
  return createHash("sha256").update(canonicalJson(hashed)).digest("hex");
}

/** The hash of `task` under `scheme`: `contentHash` is content-v2's; `fileBytesHash` the older one's (absent: the same). */
export function hashUnder(task: { contentHash: string; fileBytesHash?: string }, scheme: ContentHashScheme): string {
  return scheme === "file-bytes" ? task.fileBytesHash ?? task.contentHash : task.contentHash;
}

/** JSON with object keys sorted at every level (undefined values left out, as JSON does). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
