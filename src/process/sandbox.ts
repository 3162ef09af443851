/**
 * The OS sandbox for commands rhema runs (shell tool, setup, checks): the bubblewrap (`bwrap`)
 * command line for one command, built by a pure function from what the caller decides. Inside,
 * the whole file system is read-only except a private /tmp, a private $HOME and the workspace;
 * folders such as the run directory are covered by an empty tmpfs so a task sees neither other
 * tasks' sessions and results nor its own checkpoint; processes live in a PID namespace of their
 * own that dies with bwrap, and bwrap dies with its parent; the network is a loopback of its own
 * unless allowed. bwrap itself must be started with an empty environment (process-group.ts does):
 * its process is PID 1 inside, and `/proc/1/environ` would show whatever it was started with.
 */

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

/** $HOME inside when the environment names none usable: a folder of the private /tmp. */
export const FALLBACK_SANDBOX_HOME = "/tmp/home";

/** The private $HOME: the caller's HOME path (covered by a tmpfs) when it is absolute and not `/` or `/tmp`. */
export function sandboxHome(env: Readonly<Record<string, string>>): string {
  const home = env.HOME?.replace(/\/+$/, "");
  return home !== undefined && home.startsWith("/") && home !== "" && home !== "/tmp" ? home : FALLBACK_SANDBOX_HOME;
}

/**
 * The full argv (bwrap first) that runs `command` (argv, program first) in the sandbox. Order
 * matters: every tmpfs comes before every bind, so a workspace under /tmp, $HOME or a hidden folder
 * is not covered by it; the read-only binds come after the workspace, so one may sit inside it.
 */
export function bwrapArgv(spec: SandboxSpec, command: readonly string[]): string[] {
  if (command.length === 0) throw new Error("bwrapArgv: the command is empty");
  const home = sandboxHome(spec.env);
  const args = [spec.bwrap ?? "bwrap", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"];
  if (home !== FALLBACK_SANDBOX_HOME) args.push("--tmpfs", home);
  else args.push("--dir", home);
  for (const hidden of spec.hiddenPaths ?? []) args.push("--tmpfs", hidden);
  args.push("--bind", spec.workspace, spec.workspace);
  for (const path of spec.readOnlyBinds ?? []) args.push("--ro-bind-try", path, path);
  args.push("--chdir", spec.cwd ?? spec.workspace);
  args.push("--unshare-pid");
  if (!spec.network) args.push("--unshare-net");
  args.push("--die-with-parent", "--new-session", "--clearenv");
  for (const [name, value] of Object.entries(sandboxEnv(spec.env, home))) args.push("--setenv", name, value);
  args.push("--", ...command);
  return args;
}

/** The command's environment inside: HOME is the private one, and a TMPDIR (the host's may be read-only inside) is /tmp. */
function sandboxEnv(env: Readonly<Record<string, string>>, home: string): Record<string, string> {
  const inside: Record<string, string> = { ...env, HOME: home };
  if (inside.TMPDIR !== undefined) inside.TMPDIR = "/tmp";
  return inside;
}
