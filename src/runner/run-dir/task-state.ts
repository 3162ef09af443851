/**
 * task-state.json: what the runner knows of one task between runs — which task file (by
 * content hash) the folder belongs to, whether the workspace is set up, how often it resumed.
 * The conversation itself lives in the checkpoint beside it. `TaskFolder` (task-folder.ts)
 * reads and writes it; this module owns its shape.
 */
import { z } from "zod";
import type { StateFileKind } from "./state-file.js";

const taskStateSchema = z.strictObject({
  version: z.literal(1),
  contentHash: z.string(),
  /** The workspace is copied and every setup command exited 0. */
  setupDone: z.boolean(),
  /** Times a run found this task unfinished and continued it. */
  resumed: z.number().int().nonnegative(),
  /** When the task first started (ISO). */
  startedAt: z.string(),
  /**
   * Time spent on the task by earlier, interrupted runs: a resumed task's timeout and duration
   * count it. Recorded at each checkpoint boundary and on SIGINT/SIGTERM, so a SIGKILLed run
   * loses at most the time since its last boundary.
   */
  activeMs: z.number().int().nonnegative().default(0),
});
export type TaskState = z.infer<typeof taskStateSchema>;

export const TASK_STATE_KIND: StateFileKind<TaskState> = {
  schema: taskStateSchema,
  code: "state_invalid",
  what: "a rhema task state",
  remedy: "remove the task's folder to start it afresh",
};
