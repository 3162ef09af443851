/**
 * The OS sandbox for commands rhema runs (shell tool, setup, checks): the bubblewrap (`bwrap`)
 * command line for one command, built from what the caller decides and what the host's file
 * system holds (read through a `HostView`, so the builder is pure under test). Inside:
 *
 * - no capabilities and no way to get them back, whatever uid rhema runs as: a user namespace
 *   (`--unshare-user --disable-userns`) whose uid/gid is rhema's own, or 65534 (nobody) when rhema
 *   is root — files it makes in the workspace still belong to rhema's uid outside (in rhema's own
 *   user namespace, user-namespace.ts, "rhema's own" is the host user's, not the namespace's 0); where no user
 *   namespace can be made, `--cap-drop ALL` (bwrap always sets no-new-privileges). The probe
 *   (sandbox-probe.ts) finds which form holds. Without capabilities nothing bwrap mounted — the
 *   tmpfs over the run directory, the sandbox's own /proc, the read-only root — can be undone;
 *   inside a user namespace the mounts under it are locked as well;
 * - the whole file system read-only except the workspace; an empty tmpfs over the places unix
 *   sockets live (`/run`, `/var/run`, `/tmp`, `$XDG_RUNTIME_DIR`, the home folder), so no host
 *   daemon is reachable through a socket file (`connect()` is not a write), with the real path of
 *   `/etc/resolv.conf` bound back for DNS; folders the caller hides (the run directory); files
 *   named by credential variables covered by an unreadable node;
 * - PID, IPC, UTS and (where there is one) cgroup namespaces of its own that die with bwrap, bwrap
 *   dying with its parent; a network namespace of its own unless the network is allowed. Abstract
 *   unix sockets belong to the network namespace: out of reach without the network, reachable with it.
 *
 * bwrap itself must be started with an empty environment (process-group.ts does): its process is
 * PID 1 inside, and `/proc/1/environ` would show whatever it was started with.
 */
import { realpathSync, statSync } from "node:fs";
import { assertNever } from "../core/errors.js";
import { hostIdentity } from "./user-namespace.js";

/** How the command is kept from capabilities: a user namespace with this uid/gid inside, or bwrap's capability drop. */
export type SandboxIsolation = { kind: "userns"; uid: number; gid: number } | { kind: "cap-drop" };

/** What a caller decides about a sandbox; the workspace and environment come with each command. */
export interface SandboxPlacement {
  /** true: the host's network; false: a network namespace of its own (only its own loopback). */
  network: boolean;
  /** Paths bound back read-only after the hidden folders are covered (e.g. a final-answer file a check reads). A missing one is skipped. */
  readOnlyBinds?: readonly string[];
  /** Folders covered by an empty tmpfs, e.g. the run directory: only the workspace and `readOnlyBinds` show through. */
  hiddenPaths?: readonly string[];
  /** The bwrap binary (an absolute path from `probeSandbox`); default `bwrap`, looked up on the system's default PATH. */
  bwrap?: string;
  /** The form the probe found to hold here; default a user namespace with `sandboxIdentity` of this process. */
  isolation?: SandboxIsolation;
  /**
   * The environment rhema itself was started with (the edge passes it): the home folder,
   * `$XDG_RUNTIME_DIR` and the credential files it names are hidden as well as the command's own.
   */
  hostEnv?: Readonly<Record<string, string | undefined>>;
}

/** Everything the argv builder needs for one command. */
export interface SandboxSpec extends SandboxPlacement {
  /** The one folder the command may write, bound read-write at its own path. */
  workspace: string;
  /** The command's whole environment (`--clearenv`, then `--setenv` for each). HOME is replaced by the private one. */
  env: Readonly<Record<string, string>>;
  /** Where the command starts; default the workspace. */
  cwd?: string;
}

/** What the argv builder asks of the host's file system: a path's real path and kind, or null when it is missing. */
export interface HostView {
  resolve(path: string): { real: string; kind: "dir" | "file" | "other" } | null;
}

/** The real file system (synchronous: a few `realpath`/`stat` calls per command). */
export const REAL_HOST: HostView = {
  resolve(path) {
    try {
      const real = realpathSync(path);
      const stat = statSync(real);
      return { real, kind: stat.isDirectory() ? "dir" : stat.isFile() ? "file" : "other" };
    } catch {
      return null;
    }
  },
};

/** $HOME inside when the environment names none usable: a folder of the private /tmp. */
export const FALLBACK_SANDBOX_HOME = "/tmp/home";
/** The uid and gid a root rhema's commands get inside (nobody/nogroup). */
export const UNPRIVILEGED_ID = 65534;
/** Where unix socket files usually live; each is hidden under an empty tmpfs (`/tmp` always: it is the private one). */
export const SOCKET_PLACES: readonly string[] = ["/run", "/var/run"];
/** Variables naming a credential file: the file (or folder) is hidden. */
export const CREDENTIAL_FILE_VARIABLES: readonly string[] = ["GOOGLE_APPLICATION_CREDENTIALS", "AWS_SHARED_CREDENTIALS_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE"];
/** Files commands need that may link into a hidden place (Ubuntu's resolv.conf links into /run): their real path is bound back read-only. */
export const KEPT_FILES: readonly string[] = ["/etc/resolv.conf"];

/** The uid/gid inside for a rhema running as `uid`/`gid`: its own, or 65534 for root (uid 0 inside would hold every capability of the namespace). */
export function sandboxIdentity(uid: number, gid: number): { uid: number; gid: number } {
  return uid === 0 ? { uid: UNPRIVILEGED_ID, gid: UNPRIVILEGED_ID } : { uid, gid };
}

/** The form used when the placement names none: a user namespace with this process's identity mapped. */
export function defaultIsolation(): SandboxIsolation {
  const host = hostIdentity();
  return { kind: "userns", ...sandboxIdentity(host.uid, host.gid) };
}

/**
 * $HOME inside: the command's HOME when it is an absolute folder other than `/` and `/tmp` that
 * exists on the host (it is covered by a tmpfs), else `FALLBACK_SANDBOX_HOME` — so a HOME that
 * does not exist never stops the sandbox from starting.
 */
export function sandboxHome(env: Readonly<Record<string, string>>, host: HostView = REAL_HOST): string {
  const home = usableHome(env.HOME);
  return home !== null && host.resolve(home)?.kind === "dir" ? home : FALLBACK_SANDBOX_HOME;
}

function usableHome(value: string | undefined): string | null {
  const home = value?.replace(/\/+$/, "");
  return home !== undefined && home.startsWith("/") && home !== "" && home !== "/tmp" ? home : null;
}

/**
 * The full argv (bwrap first) that runs `command` (argv, program first) in the sandbox. Order
 * matters: every tmpfs comes before every bind, so a workspace under /tmp, $HOME or a hidden folder
 * is not covered by it; the read-only binds come after the workspace, so one may sit inside it;
 * credential files are covered last, wherever they are.
 */
export function bwrapArgv(spec: SandboxSpec, command: readonly string[], host: HostView = REAL_HOST): string[] {
  if (command.length === 0) throw new Error("bwrapArgv: the command is empty");
  const home = sandboxHome(spec.env, host);
  const envs = [spec.env, spec.hostEnv ?? {}];
  const args = [spec.bwrap ?? "bwrap", ...isolationArgs(spec.isolation ?? defaultIsolation())];
  args.push("--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  const hidden = hiddenFolders([
    ...SOCKET_PLACES, ...envs.map((env) => env.XDG_RUNTIME_DIR), ...envs.map((env) => usableHome(env.HOME) ?? undefined), ...spec.hiddenPaths ?? [],
  ], host);
  for (const folder of hidden) args.push("--tmpfs", folder);
  // A HOME whose folder sits in a hidden one (under /tmp, say) is made there; the fallback too.
  const realHome = home === FALLBACK_SANDBOX_HOME ? home : host.resolve(home)!.real;
  if (!hidden.includes(realHome)) args.push("--dir", realHome);
  for (const path of KEPT_FILES) {
    const kept = host.resolve(path);
    if (kept !== null && kept.kind === "file" && isUnder(kept.real, ["/tmp", ...hidden])) args.push("--ro-bind", kept.real, kept.real);
  }
  args.push("--bind", spec.workspace, spec.workspace);
  for (const path of spec.readOnlyBinds ?? []) args.push("--ro-bind-try", path, path);
  for (const file of credentialFiles(envs, ["/tmp", ...hidden], spec.workspace, host)) {
    if (file.kind === "dir") args.push("--tmpfs", file.real);
    else args.push("--ro-bind", "/dev/null", file.real); // bound without devices: opening it fails
  }
  args.push("--chdir", spec.cwd ?? spec.workspace);
  args.push("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try");
  if (!spec.network) args.push("--unshare-net");
  args.push("--die-with-parent", "--new-session", "--clearenv");
  for (const [name, value] of Object.entries(sandboxEnv(spec.env, home))) args.push("--setenv", name, value);
  args.push("--", ...command);
  return args;
}

function isolationArgs(isolation: SandboxIsolation): string[] {
  switch (isolation.kind) {
    case "userns":
      return ["--unshare-user", "--disable-userns", "--uid", String(isolation.uid), "--gid", String(isolation.gid)];
    case "cap-drop":
      return ["--cap-drop", "ALL"];
    default:
      return assertNever(isolation);
  }
}

/**
 * The real paths of the folders among `paths` that exist, less `/` and `/tmp` and any inside
 * another (or inside /tmp, already private), in the order given.
 */
function hiddenFolders(paths: ReadonlyArray<string | undefined>, host: HostView): string[] {
  const reals: string[] = [];
  for (const path of paths) {
    if (path === undefined || !path.startsWith("/")) continue;
    const found = host.resolve(path);
    if (found === null || found.kind !== "dir" || found.real === "/" || reals.includes(found.real)) continue;
    reals.push(found.real);
  }
  return reals.filter((real) => !isUnder(real, ["/tmp", ...reals.filter((other) => other !== real)]));
}

/** The credential files the environments name that exist and are not already hidden, each once. */
function credentialFiles(
  envs: ReadonlyArray<Readonly<Record<string, string | undefined>>>, hidden: readonly string[], workspace: string, host: HostView,
): Array<{ real: string; kind: "dir" | "file" | "other" }> {
  const files: Array<{ real: string; kind: "dir" | "file" | "other" }> = [];
  for (const env of envs) {
    for (const name of CREDENTIAL_FILE_VARIABLES) {
      const path = env[name];
      if (path === undefined || !path.startsWith("/")) continue;
      const found = host.resolve(path);
      if (found === null || found.real === "/" || isUnder(found.real, hidden) || files.some((f) => f.real === found.real)) continue;
      if (found.kind === "dir" && isUnder(workspace, [found.real])) continue; // a tmpfs there would cover the workspace
      files.push(found);
    }
  }
  return files;
}

/** Whether `path` is one of `folders` or inside one. */
export function isUnder(path: string, folders: readonly string[]): boolean {
  return folders.some((folder) => path === folder || path.startsWith(folder.endsWith("/") ? folder : `${folder}/`));
}

/** The command's environment inside: HOME is the private one, and a TMPDIR (the host's may be read-only inside) is /tmp. */
function sandboxEnv(env: Readonly<Record<string, string>>, home: string): Record<string, string> {
  const inside: Record<string, string> = { ...env, HOME: home };
  if (inside.TMPDIR !== undefined) inside.TMPDIR = "/tmp";
  return inside;
}
