/**
 * Whether the bubblewrap sandbox can be made on this machine, and in which form: bwrap found on a
 * search path, then run with the flags every sandboxed command uses — first in a user namespace
 * (`--unshare-user --disable-userns`, rhema's uid or nobody inside), else, where no user
 * namespace can be made (a root rhema in a container that refuses them), with `--cap-drop ALL` —
 * and a form is taken only when it holds: the command inside reads its own
 * `/proc/self/status` and has no capability (CapInh, CapPrm, CapEff, CapAmb all 0) and
 * no-new-privileges set. Failures are recognised and explained (bwrap missing or older than 0.8;
 * namespaces refused, as in an unprivileged container; Ubuntu 24.04's AppArmor restriction of
 * unprivileged user namespaces, as on GitHub's ubuntu-24.04 runners; capabilities kept). The
 * answer is cached per process and search path. The runner turns `bwrap` mode + unavailable into
 * exit 3 and `auto` + unavailable into running unsandboxed.
 */
import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { join } from "node:path";
import { type SandboxIsolation, bwrapArgv, defaultIsolation } from "./sandbox.js";
import { DEFAULT_SEARCH_PATH } from "./search-path.js";
import { hostIdentity } from "./user-namespace.js";

/** Where bwrap is looked for when the caller names no PATH. */
export { DEFAULT_SEARCH_PATH };
const PROBE_TIMEOUT_MS = 10_000;

export type SandboxUnavailableCode = "bwrap_missing" | "bwrap_too_old" | "userns_restricted" | "namespaces_refused" | "caps_kept" | "bwrap_failed";

/** Why the sandbox cannot be made here, and what the person running rhema can do about it. */
export interface SandboxUnavailable {
  ok: false;
  code: SandboxUnavailableCode;
  /** One sentence: what failed (bwrap's own message quoted where there is one). */
  reason: string;
  /** What to do about it. */
  fix: string;
}

/** The sandbox works: bwrap's version and path, and the form that holds here. */
export type SandboxProbe = { ok: true; version: string; bwrap: string; isolation: SandboxIsolation } | SandboxUnavailable;

const INSTALL_FIX =
  "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`, Fedora: `dnf install bubblewrap`; " +
  "scripts/ci-install-bwrap.sh does it in CI), or run with --sandbox off";

/** What bwrap's stderr says, mapped to a reason and a fix. Pure. */
export function classifyBwrapFailure(stderr: string, exitCode: number | null): SandboxUnavailable {
  const message = stderr.trim().split("\n").find((line) => line.trim() !== "")?.trim() ?? "";
  const quoted = message === "" ? `bwrap exited with code ${exitCode ?? "?"} and said nothing` : `bwrap said "${message}"`;
  if (/Unknown option --(disable-userns|unshare-cgroup-try)|--disable-userns.*not supported/i.test(stderr)) {
    return {
      ok: false, code: "bwrap_too_old",
      reason: `${quoted}: this bubblewrap is older than 0.8, which the sandbox needs (--disable-userns keeps a command from making a user namespace of its own)`,
      fix: "install bubblewrap 0.8 or later (Ubuntu 24.04 and Debian 13 ship it; or build it from https://github.com/containers/bubblewrap and put it first on PATH), or run with --sandbox off",
    };
  }
  if (/setting up uid map: Permission denied|RTM_NEWADDR: Operation not permitted|\bunshare\b.*Operation not permitted/i.test(stderr)) {
    return {
      ok: false, code: "userns_restricted",
      reason: `${quoted}: AppArmor restricts unprivileged user namespaces here (Ubuntu 23.10 and later, GitHub's ubuntu-24.04 runners)`,
      fix: "allow them with `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (see actions/runner-images#10443), " +
        "or give /usr/bin/bwrap an unconfined AppArmor profile with `userns,`; or run with --sandbox off",
    };
  }
  if (/No permissions to creat|Creating new namespace failed|Failed to make \/ slave|unprivileged user namespaces|Operation not permitted/i.test(stderr)) {
    return {
      ok: false, code: "namespaces_refused",
      reason: `${quoted}: this machine refuses the namespaces bwrap needs (user namespaces disabled, or a container without the rights)`,
      fix: "enable user namespaces (`sysctl -w user.max_user_namespaces=15000`; older Debian: `kernel.unprivileged_userns_clone=1`), " +
        "or run the container with a seccomp and AppArmor profile that allows clone/unshare and mount (e.g. `--security-opt " +
        "seccomp=unconfined --security-opt apparmor=unconfined`); or run with --sandbox off",
    };
  }
  return {
    ok: false, code: "bwrap_failed",
    reason: `${quoted} when asked to run \`true\` in a sandbox`,
    fix: "run `bwrap --unshare-user --disable-userns --ro-bind / / --proc /proc --dev /dev --unshare-pid --unshare-net true` by hand to see why, or run with --sandbox off",
  };
}

/**
 * Whether a command whose `/proc/self/status` reads `status` is held: no capability in any set
 * but the bounding one (no-new-privileges keeps an exec from filling the others from it) and
 * no-new-privileges set. null when it holds, else what was kept. Pure.
 */
export function capabilitiesKept(status: string): string | null {
  const field = (name: string): string | null => new RegExp(`^${name}:\\s*(\\S+)`, "m").exec(status)?.[1] ?? null;
  const kept: string[] = [];
  for (const name of ["CapInh", "CapPrm", "CapEff", "CapAmb"]) {
    const value = field(name);
    if (value === null || !/^0+$/.test(value)) kept.push(`${name} ${value ?? "unreadable"}`);
  }
  if (field("NoNewPrivs") !== "1") kept.push(`NoNewPrivs ${field("NoNewPrivs") ?? "unreadable"}`);
  return kept.length === 0 ? null : kept.join(", ");
}

/** The first executable `name` in the `:`-separated `searchPath`, or null. */
export async function findOnPath(name: string, searchPath: string): Promise<string | null> {
  for (const dir of searchPath.split(":")) {
    if (!dir.startsWith("/")) continue; // a relative PATH entry would depend on the working folder
    const candidate = join(dir, name);
    if (await access(candidate, constants.X_OK).then(() => true, () => false)) return candidate;
  }
  return null;
}

const cache = new Map<string, Promise<SandboxProbe>>();

/**
 * Whether sandboxed commands can run here: bwrap looked up on `path` (default
 * `DEFAULT_SEARCH_PATH`) and run once as `bwrap … true` (workspace /tmp, from /). Never throws.
 */
export function probeSandbox(opts: { path?: string } = {}): Promise<SandboxProbe> {
  const searchPath = opts.path ?? DEFAULT_SEARCH_PATH;
  let probe = cache.get(searchPath);
  if (!probe) {
    probe = runProbe(searchPath);
    cache.set(searchPath, probe);
  }
  return probe;
}

async function runProbe(searchPath: string): Promise<SandboxProbe> {
  const bwrap = await findOnPath("bwrap", searchPath);
  if (bwrap === null) {
    return { ok: false, code: "bwrap_missing", reason: `bwrap (bubblewrap) is not installed: not found on ${searchPath}`, fix: INSTALL_FIX };
  }
  // The form commands get by default: inside rhema's own user namespace, the host user's ids (user-namespace.ts).
  const userns = defaultIsolation();
  const [version, first] = await Promise.all([execBwrap(bwrap, ["--version"]), tryForm(bwrap, userns)]);
  let outcome = first;
  // Without a user namespace only a root rhema can make the sandbox (bwrap then keeps uid 0): with every capability dropped.
  if (!outcome.ok && outcome.code !== "bwrap_too_old" && hostIdentity().uid === 0) {
    const dropped = await tryForm(bwrap, { kind: "cap-drop" });
    outcome = dropped.ok ? dropped : { ...outcome, reason: `${outcome.reason}; and without one (--cap-drop ALL, as root): ${dropped.reason}` };
  }
  if (!outcome.ok) return outcome;
  return { ok: true, version: /\d+(\.\d+)+/.exec(version.stdout)?.[0] ?? version.stdout.trim(), bwrap, isolation: outcome.isolation };
}

/** Runs `cat /proc/self/status` in the sandbox in `isolation`'s form (workspace /tmp, from /): the form, or why it fails or does not hold. */
async function tryForm(bwrap: string, isolation: SandboxIsolation): Promise<{ ok: true; isolation: SandboxIsolation } | SandboxUnavailable> {
  const argv = bwrapArgv({ bwrap, isolation, workspace: "/tmp", cwd: "/", network: false, env: { PATH: DEFAULT_SEARCH_PATH } }, ["cat", "/proc/self/status"]);
  const run = await execBwrap(bwrap, argv.slice(1));
  if (run.error !== null && run.exitCode === null) {
    return { ok: false, code: "bwrap_failed", reason: `${bwrap} could not be started: ${run.error}`, fix: INSTALL_FIX };
  }
  if (run.exitCode !== 0) return classifyBwrapFailure(run.stderr, run.exitCode);
  const kept = capabilitiesKept(run.stdout);
  if (kept === null) return { ok: true, isolation };
  return {
    ok: false, code: "caps_kept",
    reason: `a command in the sandbox (${isolation.kind === "userns" ? "user namespace" : "--cap-drop ALL"}) kept capabilities: ${kept}`,
    fix: "use bubblewrap 0.8 or later, not installed setuid, or run with --sandbox off",
  };
}

interface ExecResult { exitCode: number | null; stdout: string; stderr: string; error: string | null }

function execBwrap(bwrap: string, args: string[]): Promise<ExecResult> {
  return new Promise((resolveRun) => {
    execFile(bwrap, args, { env: {}, timeout: PROBE_TIMEOUT_MS, encoding: "utf8" }, (err, stdout, stderr) => {
      const code = err && typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : err ? null : 0;
      resolveRun({ exitCode: code, stdout, stderr, error: err && code === null ? err.message : null });
    });
  });
}
