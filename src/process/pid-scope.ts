/**
 * Where a pid names one process: one pid namespace on one boot. A pid recorded in one scope
 * says nothing in another — another container of the machine, an `unshare -p`, the same
 * machine after a reboot — whatever the host name says, so nothing recorded there is signalled here.
 */
import { readFile, readlink } from "node:fs/promises";
import type { PidScope } from "../core/tool.js";

/** This process's pid scope; null where /proc cannot tell (not Linux, no /proc). */
export async function currentPidScope(): Promise<PidScope | null> {
  const bootId = await readFile("/proc/sys/kernel/random/boot_id", "utf8").then((t) => t.trim(), () => "");
  const pidNamespace = await readlink("/proc/self/ns/pid").catch(() => "");
  return bootId !== "" && pidNamespace !== "" ? { bootId, pidNamespace } : null;
}

/** Whether two scopes are the same, both known. */
export function samePidScope(a: PidScope | null | undefined, b: PidScope | null | undefined): boolean {
  return a != null && b != null && a.bootId === b.bootId && a.pidNamespace === b.pidNamespace;
}
