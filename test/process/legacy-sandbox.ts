/**
 * The sandbox command line as it was before issue #19 (a copy of `bwrapArgv` at edb2699), kept
 * so the escape tests can show each attempt getting out of it — and not out of today's. Not
 * used by rhema.
 */
import type { SandboxSpec } from "../../src/process/sandbox.js";

const FALLBACK_SANDBOX_HOME = "/tmp/home";

function legacySandboxHome(env: Readonly<Record<string, string>>): string {
  const home = env.HOME?.replace(/\/+$/, "");
  return home !== undefined && home.startsWith("/") && home !== "" && home !== "/tmp" ? home : FALLBACK_SANDBOX_HOME;
}

/** The old argv: read-only root, private /tmp and HOME, hidden folders, the workspace; bwrap keeps every capability as root. */
export function legacyBwrapArgv(spec: SandboxSpec, command: readonly string[]): string[] {
  if (command.length === 0) throw new Error("bwrapArgv: the command is empty");
  const home = legacySandboxHome(spec.env);
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
  const inside: Record<string, string> = { ...spec.env, HOME: home };
  if (inside.TMPDIR !== undefined) inside.TMPDIR = "/tmp";
  for (const [name, value] of Object.entries(inside)) args.push("--setenv", name, value);
  args.push("--", ...command);
  return args;
}
