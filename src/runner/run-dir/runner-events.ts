/**
 * What the runner itself tells the outside about a task, beside the agent's events: each setup
 * command and each check as it starts and ends, and each model request retried after a failure. They travel the same way as agent events (the
 * task's events.jsonl, the live view, plain lines, `--json`), but they are the runner's, not the
 * engine's: core knows nothing of them.
 */
import type { AgentEvent } from "../../core/events.js";

/** Why a setup command or check runs again: it was running when an earlier run was killed. */
export type RerunReason = "interrupted";

export type RunnerEvent =
  /** `rerun`: it was started by an earlier run that was killed; it may have partly run. */
  | { type: "setup_start"; index: number; total: number; command: string; rerun: RerunReason | null }
  | { type: "setup_end"; index: number; total: number; command: string; exitCode: number | null; timedOut: boolean; durationMs: number }
  | { type: "check_start"; index: number; total: number; name: string; command: string; rerun: RerunReason | null }
  /**
   * `kept`: finished in an earlier run, its result kept (not run again); `notRun`: why it did
   * not run (the task's timeout passed first).
   */
  | { type: "check_end"; index: number; total: number; name: string; passed: boolean; exitCode: number | null; timedOut: boolean; durationMs: number; kept: boolean; notRun?: string }
  /**
   * A model request failed retryably and is about to be tried again (provider-retry.ts): `who`
   * says whose request (the task's model or its compaction worker), `attempt` of `of` is the one
   * about to be made, after `delayMs`; `reason` is short (`503`, `connection reset`, `stream
   * idle`), `status` the HTTP status if any, `message` the failure in full.
   */
  | { type: "retry"; who: "task" | "worker"; attempt: number; of: number; delayMs: number; reason: string; status: number | null; message: string }
  /** A replay (`--cassette-mode hybrid` or `record-missing`) found no recorded answer: `reason` names the first difference; the rest of the trial goes live. */
  | { type: "cassette_live"; reason: string };

/** Everything a task's event stream carries. */
export type TaskEvent = AgentEvent | RunnerEvent;

