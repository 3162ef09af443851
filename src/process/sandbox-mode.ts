/**
 * The sandbox modes and how a run settles on one: `auto | bwrap | off`, asked for on the CLI,
 * in a policy file and in a task file, the strictest of them winning (off < auto < bwrap), so a
 * task file cannot switch off what the operator or the policy asked for; then, against what the
 * probe (sandbox-probe.ts) found, what a task's commands actually run in:
 *
 *   bwrap + bwrap works     → bwrap          auto + bwrap works     → bwrap
 *   bwrap + bwrap unusable  → SandboxUnavailableError (exit 3, before any task starts)
 *   auto  + bwrap unusable  → none, with the probe's reason (said loudly by the runner)
 *   off                     → off (explicit)
 *
 * "Works" means a form that holds (sandbox-probe.ts): a user namespace, or for a root rhema
 * where none can be made, `--cap-drop ALL`; the form travels with the answer to every command.
 *
 * Pure: the probe is run by the caller, once per run.
 */
import { RhemaError } from "../core/errors.js";
import type { SandboxProbe, SandboxUnavailable } from "./sandbox-probe.js";
import type { SandboxIsolation } from "./sandbox.js";

export const SANDBOX_MODES = ["auto", "bwrap", "off"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

const STRICTNESS: Readonly<Record<SandboxMode, number>> = { off: 0, auto: 1, bwrap: 2 };

/** The strictest of the modes asked for (off < auto < bwrap); the first of equals wins; null for none. */
export function strictestMode<T extends { mode: SandboxMode }>(asked: readonly T[]): T | null {
  let strictest: T | null = null;
  for (const entry of asked) if (strictest === null || STRICTNESS[entry.mode] > STRICTNESS[strictest.mode]) strictest = entry;
  return strictest;
}

/** What a task's commands run in. `none`: auto found bwrap unusable; `off`: asked for. */
export type SandboxUse =
  | { mode: "bwrap"; bwrap: string; version: string; isolation: SandboxIsolation }
  | { mode: "none"; reason: string; fix: string }
  | { mode: "off" };

/** `--sandbox bwrap` (or a policy or task asking for it) on a machine where bwrap cannot run: exit 3. */
export class SandboxUnavailableError extends RhemaError {
  readonly unavailable: SandboxUnavailable;
  constructor(unavailable: SandboxUnavailable, askedBy: string) {
    super("sandbox_unavailable", `the bwrap sandbox was asked for (${askedBy}) but cannot be made here: ${unavailable.reason}.\n` +
      `To fix: ${unavailable.fix}. (--sandbox auto runs unsandboxed instead, saying so.)`);
    this.unavailable = unavailable;
  }
}

/** Whether any of the modes needs the probe (everything but off). */
export function needsProbe(modes: Iterable<SandboxMode>): boolean {
  for (const mode of modes) if (mode !== "off") return true;
  return false;
}

/**
 * What commands run in under `mode`, given the probe's answer (null only for `off`).
 * `askedBy` names who asked for bwrap, for the error ("--sandbox", "policy ci.yaml").
 */
export function chooseSandbox(mode: SandboxMode, probe: SandboxProbe | null, askedBy: string): SandboxUse {
  if (mode === "off") return { mode: "off" };
  if (probe === null) throw new Error("chooseSandbox: a probe is needed for mode " + mode);
  if (probe.ok) return { mode: "bwrap", bwrap: probe.bwrap, version: probe.version, isolation: probe.isolation };
  if (mode === "bwrap") throw new SandboxUnavailableError(probe, askedBy);
  return { mode: "none", reason: probe.reason, fix: probe.fix };
}
