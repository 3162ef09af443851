/** Drives the built `rhema` command as a user would: a real process, real files. */
import { spawn, type ChildProcess } from "node:child_process";
import { compiled } from "./paths.js";

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The `rhema` executable (package.json's bin): the CLI bundle, run with its code cache. */
export const CLI = compiled("src/cli/rhema.js");

/** The environment the CLI runs with in tests: CI-style plain output, no colour. */
export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  // Set by node's test runner for its children: a check running `node --test` would then
  // report to us instead of exiting non-zero on failure.
  delete env.NODE_TEST_CONTEXT;
  return { ...env, CI: "true", NO_COLOR: "1", ...extra };
}

/**
 * `detached`: the CLI leads a process group of its own (so a test can kill that group).
 * `launcher`: a command the CLI is started through (`["unshare", "-p", "-f", "--mount-proc"]`).
 */
export function startCli(
  args: string[], opts: { cwd: string; env?: Record<string, string>; detached?: boolean; launcher?: readonly string[] },
): { child: ChildProcess; done: Promise<CliResult> } {
  const [command, ...prefix] = [...(opts.launcher ?? []), process.execPath];
  const child = spawn(command!, [...prefix, CLI, ...args], { cwd: opts.cwd, env: opts.env ?? cliEnv(), stdio: ["ignore", "pipe", "pipe"], detached: opts.detached ?? false });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<CliResult>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

export function runCli(args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  return startCli(args, opts).done;
}
