/**
 * Each task's sandbox setting and where each part came from: the mode is the strictest of the
 * CLI's `--sandbox`, the task's policy's `sandbox:` and the task file's `sandbox:` (default
 * auto); the network of the shell tool and checks is the policy's `network:` (default deny).
 * Pure; `rhema validate` shows the result, `rhema run` probes the machine against it.
 */
import { strictestMode, type SandboxMode } from "../../process/sandbox-mode.js";

export type SandboxModeSource = "flag" | "policy" | "task" | "default";
export type NetworkSetting = "allow" | "deny";

export interface TaskSandboxSetting {
  mode: SandboxMode;
  /** Who set the mode: the strictest asker (the first of equals, in the order flag, policy, task). */
  modeFrom: SandboxModeSource;
  network: NetworkSetting;
  networkFrom: "policy" | "default";
  /** Names the asker for messages: `--sandbox`, `policy ci.yaml`, `task file /x/t.yaml`, `the default`. */
  askedBy: string;
}

export interface SandboxAskers {
  flag?: SandboxMode | undefined;
  policy: { sandbox: SandboxMode | null; network: NetworkSetting | null; source: string };
  task: { sandbox?: SandboxMode | undefined; file: string };
}

export const DEFAULT_SANDBOX_MODE: SandboxMode = "auto";
export const DEFAULT_NETWORK: NetworkSetting = "deny";

export function resolveTaskSandbox(askers: SandboxAskers): TaskSandboxSetting {
  const asked: { mode: SandboxMode; from: SandboxModeSource; by: string }[] = [];
  if (askers.flag !== undefined) asked.push({ mode: askers.flag, from: "flag", by: "--sandbox" });
  if (askers.policy.sandbox !== null) asked.push({ mode: askers.policy.sandbox, from: "policy", by: `policy ${askers.policy.source}` });
  if (askers.task.sandbox !== undefined) asked.push({ mode: askers.task.sandbox, from: "task", by: `task file ${askers.task.file}` });
  const winner = strictestMode(asked) ?? { mode: DEFAULT_SANDBOX_MODE, from: "default" as const, by: "the default" };
  return {
    mode: winner.mode, modeFrom: winner.from, askedBy: winner.by,
    network: askers.policy.network ?? DEFAULT_NETWORK,
    networkFrom: askers.policy.network === null ? "default" : "policy",
  };
}

/**
 * `bwrap (from policy), network deny (default)`: one task's setting as validate prints it. With
 * the sandbox off nothing can deny the network, so it says allow, as the run records it
 * (`result.json` `sandbox: {mode: "off", network: "allow"}`), whatever the policy asks.
 */
export function describeSandboxSetting(setting: TaskSandboxSetting): string {
  const mode = `sandbox ${setting.mode} (${setting.modeFrom})`;
  if (setting.mode === "off") {
    const ignored = setting.network === "deny" && setting.networkFrom === "policy" ? "; the policy's network: deny needs a sandbox" : "";
    return `${mode}, network allow (no sandbox${ignored})`;
  }
  return `${mode}, network ${setting.network} (${setting.networkFrom})`;
}
