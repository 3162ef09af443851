/**
 * A task whose model is a recording (`model: { provider: cassette, path }`, issue 25): the
 * provider and model its cassette recorded are the task's — read from its first trial's cassette
 * when the run is planned, so its token counter, pricing and results are the recorded model's —
 * and every trial replays its cassette strictly (the planner makes the model one that is never
 * asked: no key). `path` is a folder of cassettes as `run --cassette DIR` records them, or one
 * cassette file every trial answers from. No cassette there is exit 2 naming the task file and
 * the field.
 */
import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import { RhemaError, errnoCode, errorMessage } from "../../core/errors.js";
import type { ProviderSpec } from "../../providers/provider-factory.js";
import { isNamedProvider, isScriptedProvider } from "../../providers/provider-registry.js";
import { readCassette } from "../../store/cassette-file.js";
import { cassettePath } from "../trials/cassette-path.js";
import { taskKey } from "../tasks/task-key.js";
import type { CassetteTaskModel, TaskDefinition } from "../tasks/task-file.js";

/** Where a recorded task's cassettes are: a folder of them, or one file (`file`, in the folder `dir`). */
export interface RecordedCassettes {
  dir: string;
  file?: string;
}

/** The task's model when it is a recording; null otherwise. */
export function recordedModelOf(task: Pick<TaskDefinition, "model">): CassetteTaskModel | null {
  return task.model !== null && "path" in task.model ? task.model : null;
}

/** A recorded task's cassettes, and the spec it is planned with: the provider and model they recorded. */
export async function planRecordedTask(task: TaskDefinition, model: CassetteTaskModel): Promise<{ cassettes: RecordedCassettes; spec: ProviderSpec }> {
  const cassettes = (await pathKind(task.file, model.path)) === "file" ? { dir: dirname(model.path), file: model.path } : { dir: model.path };
  return { cassettes, spec: await recordedSpec(task, cassettes) };
}

async function recordedSpec(task: TaskDefinition, settings: RecordedCassettes): Promise<ProviderSpec> {
  const path = settings.file ?? cassettePath(settings.dir, { suite: task.suite, id: task.id, variant: task.variant ?? null, repeat: 1 });
  const cassette = await readCassette(path).catch((err: unknown) => {
    throw new RhemaError("task_invalid", `${task.file}: model.path: ${errorMessage(err)}`, { cause: err });
  });
  if (cassette === null) {
    throw new RhemaError("task_invalid", `${task.file}: model.path: no cassette of ${taskKey(task)} at ${path}; record it first (rhema run --cassette ${settings.dir})`);
  }
  const { provider, model } = cassette.header;
  if (isScriptedProvider(provider)) return { provider, script: [], name: model ?? taskKey(task) };
  if (isNamedProvider(provider) && model !== null) return { provider, name: model };
  throw new RhemaError("task_invalid", `${task.file}: model.path: ${path} was recorded from ${provider}${model === null ? "" : `:${model}`}, which this rhema cannot stand in for`);
}

async function pathKind(file: string, path: string): Promise<"file" | "folder"> {
  try {
    const info = await stat(path);
    if (info.isDirectory()) return "folder";
    if (info.isFile()) return "file";
    throw new RhemaError("task_invalid", `${file}: model.path: ${path} is neither a folder of cassettes nor a cassette file`);
  } catch (err) {
    if (err instanceof RhemaError) throw err;
    const why = errnoCode(err) === "ENOENT" ? "no such folder or file" : errorMessage(err);
    throw new RhemaError("task_invalid", `${file}: model.path: ${path}: ${why}`, { cause: err });
  }
}
