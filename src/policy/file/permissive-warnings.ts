/**
 * The warning DESIGN §6 owes a user of a `default: allow` policy: a deny list cannot contain the
 * programs that run code given as data (`python3 -c`, `awk 'BEGIN{system(…)}'`, an `npm test`
 * whose script the agent edited), so under it the shell can do anything. Pure: a compiled policy
 * in, the sentences to print out (empty when the policy is an allowlist or keeps the shell shut).
 * Written here for the CLI's `validate` and `policy check` until the policy analysis grows its
 * own; callers depend only on `permissiveWarnings(policy): string[]`.
 */
import type { Policy, PolicyRule } from "./policy-model.js";

/** A rule that denies every shell call, whatever its command. */
function deniesAllShell(rule: PolicyRule): boolean {
  return rule.effect === "deny" && rule.tools !== null && rule.tools.includes("shell") && rule.paths === null && rule.shell === null;
}

/** Warnings for a policy whose shell is open by default; `[]` for allowlists. */
export function permissiveWarnings(policy: Policy): string[] {
  if (policy.default !== "allow" || policy.rules.some(deniesAllShell)) return [];
  const denied = policy.rules.some((r) => r.effect === "deny" && r.shell !== null);
  return [
    `${policy.defaultLabel}: \`default: allow\` lets the shell run any command no rule denies` +
      (denied ? ", and a deny list cannot hold" : "; no deny list can hold") +
      " every program that runs code given as data (python3 -c, awk system(), an edited `npm test`)." +
      " Use `default: deny` with an allowlist, and the OS sandbox, as the defence.",
  ];
}
