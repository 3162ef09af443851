/**
 * Where a pid names one process: one pid namespace on one boot. A pid recorded in one scope
 * says nothing in another — another container of the machine, an `unshare -p`, the same
 * machine after a reboot — whatever the host name says, so nothing recorded there is signalled here.
 */
import { readFile, readlink } from "node:fs/promises";
import { errnoCode, isMachineLimitErrno } from "../core/errors.js";
import type { PidScope } from "../core/tool.js";

let known: PidScope | null | undefined;

/**
 * This process's pid scope; null where /proc cannot tell (not Linux, no /proc). Read once (a
 * process keeps its boot and its pid namespace); out of file handles, the read throws rather than
 * say null, and is tried again next time.
 */
export async function currentPidScope(): Promise<PidScope | null> {
  if (known !== undefined) return known;
  const bootId = await readFile("/proc/sys/kernel/random/boot_id", "utf8").then((t) => t.trim(), unlessMachineLimit);
  const pidNamespace = await readlink("/proc/self/ns/pid").catch(unlessMachineLimit);
  known = bootId !== "" && pidNamespace !== "" ? { bootId, pidNamespace } : null;
  return known;
}

/** "" for a read that failed, unless it failed for the machine's limits: then it is thrown. */
function unlessMachineLimit(err: unknown): string {
  if (isMachineLimitErrno(errnoCode(err) ?? "")) throw err;
  return "";
}

/** Whether two scopes are the same, both known. */
export function samePidScope(a: PidScope | null | undefined, b: PidScope | null | undefined): boolean {
  return a != null && b != null && a.bootId === b.bootId && a.pidNamespace === b.pidNamespace;
}
