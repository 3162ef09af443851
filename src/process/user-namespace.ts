/**
 * rhema run again inside a user namespace of its own (issue 24): where it is not root, the
 * kernel's overlay can still be mounted — in a mount namespace owned by a user namespace in which
 * rhema is uid 0 (`unshare --user --map-root-user --mount`). A mount made there is invisible from
 * outside, and rhema's built-in tools must see the merged view, so the whole `rhema run` is started
 * again inside it (cli/user-namespace-entry.ts); what stays outside only waits for it and passes
 * signals on.
 *
 * Inside, rhema's uid is 0 but its files are the host user's, and it holds no power over
 * anything the host user could not touch. Three things must not take that 0 at its word:
 *   - the sandbox's identity: commands run as the host user's uid (bwrap's own user namespace
 *     maps it onto the namespace's 0, which is the host user), as they would outside — not as
 *     nobody, which is what a real root's commands get;
 *   - overlay mounts take `userxattr`: a user namespace cannot write the `trusted.overlay.*`
 *     attributes a folder made opaque needs (without it, removing a base folder fails with EIO);
 *   - the host tools rhema runs itself with the user's own setup — git fetching a workspace's
 *     repository, over ssh too — run as the host user (`asHostUser`): ssh looks its user up by
 *     uid, and as 0 it would look for root's keys.
 * `hostIdentity()` says who rhema is on the host: the ids the outer process handed in through
 * `RHEMA_HOST_ID`, believed only when this process's uid map says the same (a variable set by
 * hand outside a namespace changes nothing).
 */
import { readFileSync } from "node:fs";
import { DEFAULT_SEARCH_PATH } from "./search-path.js";

/** `uid:gid` of the host user, set by the outer process for the one it starts inside. */
export const HOST_ID_VARIABLE = "RHEMA_HOST_ID";

export interface HostIdentity {
  uid: number;
  gid: number;
}

/**
 * The host user a process inside a namespace runs for, or null: `hostId` (`RHEMA_HOST_ID`) read
 * against the process's own uid and uid map (`/proc/self/uid_map`: one line, 0 → that uid, 1 long).
 */
export function namespaceHost(hostId: string | undefined, uid: number, uidMap: string | null): HostIdentity | null {
  const ids = /^(\d+):(\d+)$/.exec(hostId ?? "");
  if (ids === null || uid !== 0 || uidMap === null) return null;
  const host = { uid: Number(ids[1]), gid: Number(ids[2]) };
  const lines = uidMap.trim().split("\n").map((line) => line.trim().split(/\s+/).map(Number));
  const [only] = lines;
  return lines.length === 1 && only!.length === 3 && only![0] === 0 && only![1] === host.uid && only![2] === 1 ? host : null;
}

let cached: { identity: HostIdentity; inNamespace: boolean } | undefined;

/**
 * Takes the host user's ids the outer process handed in (`RHEMA_HOST_ID`, read by the edge that
 * owns the environment: cli/main.ts), believed only when the uid map bears them out. Without a
 * call, rhema is who its uid says.
 */
export function adoptHostIdentity(hostId: string | undefined): void {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  const uidMap = uid === 0 && hostId !== undefined ? readOrNull("/proc/self/uid_map") : null;
  const host = namespaceHost(hostId, uid, uidMap);
  cached = host === null ? { identity: { uid, gid }, inNamespace: false } : { identity: host, inNamespace: true };
}

function resolved(): { identity: HostIdentity; inNamespace: boolean } {
  if (cached === undefined) adoptHostIdentity(undefined);
  return cached!;
}

/** Who rhema is on the host: its own uid and gid, or, inside its user namespace, the host user's. */
export function hostIdentity(): HostIdentity {
  return resolved().identity;
}

/** Whether this rhema runs inside the user namespace it started itself in (see the header). */
export function inOwnUserNamespace(): boolean {
  return resolved().inNamespace;
}

/**
 * `argv` run as the host user where rhema runs in its own user namespace: in a user namespace of
 * its own that maps the host uid and gid onto the namespace's 0 (`unshare --map-user`), so a tool
 * that looks itself up by uid (ssh finds `~/.ssh` through the password file, not $HOME) finds the
 * host user, and holds no capability. Elsewhere `argv` itself.
 */
export function asHostUser(argv: readonly string[]): string[] {
  if (!inOwnUserNamespace()) return [...argv];
  const { uid, gid } = hostIdentity();
  return ["unshare", "--user", `--map-user=${uid}`, `--map-group=${gid}`, "--", ...argv];
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** The options of `unshare` that make the namespace: a user namespace with rhema as its 0, and a private mount namespace. */
export const UNSHARE_OPTIONS: readonly string[] = ["--user", "--map-root-user", "--mount", "--propagation", "private"];

/**
 * What must work inside such a namespace before rhema moves into one (run as `sh -c PROBE sh UID
 * GID`, from inside it): bwrap found where the sandbox's probe looks (without it the run's
 * commands would go unsandboxed, as the namespace's 0); a mount (of a tmpfs over the namespace's
 * own /tmp); the kernel's overlay on it with `userxattr` (Linux 5.11 and later; Ubuntu's AppArmor
 * may refuse both), a write through it landing in its layer; and bwrap starting inside as the
 * sandbox does, with the host user's ids. Exit 0: all of it; else the number of the step that failed.
 */
export const USER_NAMESPACE_PROBE = [
  `B=$(PATH=${DEFAULT_SEARCH_PATH} command -v bwrap) || exit 9`,
  "mount -t tmpfs rhema-probe /tmp || exit 10",
  "mkdir /tmp/l /tmp/u /tmp/w /tmp/m && echo base > /tmp/l/f || exit 11",
  "mount -t overlay -o userxattr,lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w rhema-probe /tmp/m || exit 12",
  'echo w > /tmp/m/g && [ "$(cat /tmp/m/f)" = base ] && [ -f /tmp/u/g ] && [ ! -e /tmp/l/g ] || exit 13',
  '"$B" --unshare-user --disable-userns --uid "$1" --gid "$2" --ro-bind / / --proc /proc --dev /dev --unshare-pid true || exit 14',
].join("\n");
