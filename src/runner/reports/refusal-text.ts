/**
 * How a provider's refusal of the run is said (runner/execute/provider-stops.ts): the one line the
 * CLI prints and the Action annotates, the summary's one block, and the reason a JUnit skipped
 * entry gives each trial the refusal left unfinished. Pure.
 */
import { refusalWhat, type ProviderRefusal } from "../../core/errors.js";
import { counted } from "../../core/counted.js";
import { credentialNames } from "../../providers/provider-auth.js";
import { isProviderName, providerEntry } from "../../providers/provider-registry.js";
import type { UnfinishedTask } from "../run-dir/task-result.js";

/**
 * The one line, with what to do: "anthropic refused the key (401 authentication_error: invalid
 * x-api-key): set a valid ANTHROPIC_API_KEY and run the same command to resume".
 */
export function refusalMessage(r: ProviderRefusal): string {
  const keys = isProviderName(r.provider) ? providerEntry(r.provider).envKeys : null;
  const key = keys ? credentialNames(keys.auth) : null;
  const todo = r.reason === "auth"
    ? `set a valid ${key ?? "API key"}`
    : `add credit or raise the quota of the account${key ? ` ${key} belongs to` : ""} (or set another key)`;
  return `${r.provider} ${refusalWhat(r)}: ${todo} and run the same command to resume`;
}

/** Why a trial a refusal left unfinished has no result (JUnit's skipped message, the reports' reason). */
export function refusalSkipText(by: NonNullable<UnfinishedTask["refusedBy"]>, state: UnfinishedTask["state"]): string {
  const why = by.reason === "auth" ? `${by.provider} refused the key` : `${by.provider} refused the run (quota or credit spent)`;
  return state === "interrupted" ? `not finished: ${why} while it ran; the same command continues it from its checkpoint` : `not started: ${why}`;
}

/** The summary's block: each refusal, what to do, and how many trials it left unfinished (none errored). */
export function refusalSection(refusals: readonly ProviderRefusal[], unfinished: readonly UnfinishedTask[]): string {
  if (refusals.length === 0) return "";
  const lines = ["### ⛔ The run could not continue"];
  for (const r of refusals) {
    const left = unfinished.filter((u) => u.refusedBy?.provider === r.provider);
    const running = left.filter((u) => u.state === "interrupted").length;
    lines.push("", `**${refusalMessage(r)}.**`, "",
      `${counted(left.length, "trial")} of ${r.provider} left unfinished (${running} checkpointed while running, ${left.length - running} not started); none is recorded errored, and no --retry-errored is needed.`);
  }
  return lines.join("\n");
}
