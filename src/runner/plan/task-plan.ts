/**
 * A task as planned (issue 21): everything a run decides about a task before any of it runs,
 * decided once — its model and a way to make it per trial, its compaction worker, what its
 * requests are priced as, its approval, its sandbox setting, its stream-idle limit and the
 * scrubbed environment its commands run in. Its trials take their services from here; no layer
 * below receives a raw flag to decide again.
 */
import type { Approval } from "../../core/approval.js";
import type { TokenCounter } from "../../core/token-counter.js";
import type { ModelProvider } from "../../core/provider.js";
import type { ProviderCapabilities } from "../../providers/provider-registry.js";
import type { RecordedCassettes } from "./recorded-model.js";
import type { ProviderSpec } from "../../providers/provider-factory.js";
import type { ScriptStep } from "../../providers/script.js";
import type { TaskPricing } from "../pricing/task-pricing.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import type { TaskSandboxSetting } from "../tasks/task-sandbox.js";
import type { TrialKey } from "../trials/trial-key.js";
import { chooseScript } from "../../providers/script-choice.js";

/**
 * What a task's commands (setup, the shell tool, checks) run with: decided once, from `--allow-env`
 * and the environment. The run makes its command runner from `env` (execute/ imports plan/, not
 * the other way).
 */
export interface CommandEnvironment {
  /** The environment with secret-looking variables removed, except the allowed names. */
  env: Readonly<Record<string, string>>;
  /** The names let through (kept so a layer that scrubs again keeps them: scrubbing is idempotent). */
  allowEnv: readonly string[];
}

export interface TaskPlan {
  task: TaskDefinition;
  /** `suite/id`. */
  key: string;
  /** The task's model as resolved (task file, else the flags). */
  spec: ProviderSpec;
  /** Its provider's capabilities (the registry's). */
  capabilities: ProviderCapabilities;
  /** The model for one trial: a scripted task's script is chosen per trial (`scriptFor`); a named model's provider is made once. */
  providerFor(trial: TrialKey): ModelProvider;
  /** The compaction worker (`transcript.worker`); null: the task's own model (the elider when scripted). */
  worker: ModelProvider | null;
  pricing: TaskPricing;
  /** A fresh approval per trial, so denials are counted per trial. */
  approvalFor(trial: TrialKey): Approval;
  /** The strictest of --sandbox, the policy's and the task's (settled against the probe before the run). */
  sandbox: TaskSandboxSetting;
  /** Its stream idle limit: its own, else `--stream-idle`, else undefined (the providers' default). */
  streamIdleMs: number | undefined;
  commands: CommandEnvironment;
  /** What its tokens are counted with (src/tokens/counter-choice.ts); a resumed trial keeps its session's. */
  tokenCounter: TokenCounter;
  /** A task whose model is a recording (`provider: cassette`): the cassettes its trials replay strictly; else null. */
  recordedCassettes: RecordedCassettes | null;
}

/**
 * The script a scripted task's trial answers from: its one `script:`, or the alternative of
 * `scripts:` its seed and trial key draw (providers/script-choice.ts), the same on every resume.
 */
export function scriptFor(task: TaskDefinition, trial: TrialKey): readonly ScriptStep[] {
  if (!task.model || !("script" in task.model)) throw new Error(`scriptFor: ${task.file} has no script`);
  return chooseScript(task.model, task.seed ?? "", trial);
}

/** The trial key of a task's only trial (no variant, repeat 1): what a caller that runs each task once asks for. */
export function onlyTrial(task: Pick<TaskDefinition, "suite" | "id">): TrialKey {
  return { suite: task.suite, id: task.id, variant: null, repeat: 1 };
}
