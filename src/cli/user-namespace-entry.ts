/**
 * The `rhema` executable's first decision: a `rhema run` by a user who is not root, which may lay
 * workspaces over a base with the kernel's overlay (`--workspace-layers` auto or overlay) and
 * sandboxes its commands (`--sandbox` not off), starts itself again inside a user namespace of its
 * own (process/user-namespace.ts says why and what changes inside), when a probe shows that such a
 * namespace can mount an overlay and start the sandbox here. Otherwise — root, a machine whose
 * kernel or AppArmor refuses it, no bwrap — it runs as it is, and the run chooses fuse-overlayfs
 * or copies as before. `--sandbox off` stays outside: its commands would run as the namespace's 0,
 * where `sudo` and every tool that looks at its uid behave otherwise.
 *
 * What stays outside starts the inner rhema in a process group of its own, so a signal sent to
 * the outer's group (Ctrl-C, GitHub's cancel) reaches the inner once, passed on, not twice; it
 * passes on SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, stops with it on SIGTSTP and
 * continues it on SIGCONT, and ends as the inner ended (its exit code, or the same signal). A
 * SIGKILL of the outer, which it cannot pass on, kills the inner too: it is started under
 * `setpriv --pdeathsig KILL`, which the kernel carries out when its parent dies.
 *
 * This module is loaded by the executable before the bundle: it imports only Node and the small
 * process/user-namespace.ts.
 */
import { spawn, spawnSync } from "node:child_process";
import { constants } from "node:os";
import { HOST_ID_VARIABLE, UNSHARE_OPTIONS, USER_NAMESPACE_PROBE } from "../process/user-namespace.js";

/** The value a flag was given on the command line (`--name value`, `--name=value`, `--camelName`), the last one winning as in yargs; undefined: not given. */
export function flagValue(args: readonly string[], name: string): string | undefined {
  const camel = name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") break;
    for (const spelling of new Set([name, camel])) {
      if (arg === `--${spelling}`) value = args[i + 1];
      else if (arg.startsWith(`--${spelling}=`)) value = arg.slice(spelling.length + 3);
    }
  }
  return value;
}

/** Whether a command line (the arguments after `rhema`) is a run that would mount layers inside a user namespace, by its flags alone. */
export function runWantsUserNamespace(args: readonly string[]): boolean {
  if (args[0] !== "run") return false;
  const options = args.slice(1, args.includes("--") ? args.indexOf("--") : undefined);
  if (options.some((arg) => arg === "--help" || arg === "-h" || arg === "--version")) return false;
  const layers = flagValue(args, "workspace-layers") ?? "auto";
  const sandbox = flagValue(args, "sandbox") ?? "auto";
  return (layers === "auto" || layers === "overlay") && sandbox !== "off";
}

/** Signals the outer passes on to the inner. */
const PASSED_ON: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"];

const PROBE_TIMEOUT_MS = 10_000;

/**
 * Whether a user namespace here can do what the run needs (USER_NAMESPACE_PROBE), started the
 * way the inner rhema will be (setpriv, unshare) with the host user's ids; ~15 ms.
 */
export function userNamespaceWorks(env: NodeJS.ProcessEnv, uid: number, gid: number): boolean {
  const probe = spawnSync("setpriv", ["--pdeathsig", "KILL", "unshare", ...UNSHARE_OPTIONS, "--", "/bin/sh", "-c", USER_NAMESPACE_PROBE, "sh", String(uid), String(gid)], {
    env, stdio: "ignore", timeout: PROBE_TIMEOUT_MS,
  });
  return probe.error === undefined && probe.status === 0;
}

/**
 * Runs this `rhema run` again inside a user namespace when it should (see the header): a promise
 * that never settles — the process exits as the inner did — or null, and the caller runs the
 * command itself. `codeCache`: the outer's code-cache folder, handed in (inside, the uid is 0).
 */
export function runInUserNamespace(codeCache: string | null): Promise<never> | null {
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  // uid 0: real root, or the inner rhema already (its namespace makes it 0).
  if (process.platform !== "linux" || uid === undefined || gid === undefined || uid === 0) return null;
  const args = process.argv.slice(2);
  if (!runWantsUserNamespace(args)) return null;
  if (!userNamespaceWorks(process.env, uid, gid)) return null;
  const env: NodeJS.ProcessEnv = { ...process.env, [HOST_ID_VARIABLE]: `${uid}:${gid}` };
  if (env.RHEMA_COMPILE_CACHE === undefined && codeCache !== null) env.RHEMA_COMPILE_CACHE = codeCache;
  const inner = spawn("setpriv", ["--pdeathsig", "KILL", "unshare", ...UNSHARE_OPTIONS, "--", process.execPath, ...process.execArgv, process.argv[1]!, ...args], {
    env, stdio: "inherit", detached: true,
  });
  return new Promise<never>(() => {
    const passOn = (signal: NodeJS.Signals) => () => void inner.kill(signal);
    for (const signal of PASSED_ON) process.on(signal, passOn(signal));
    process.on("SIGTSTP", () => {
      inner.kill("SIGTSTP");
      process.kill(process.pid, "SIGSTOP");
    });
    process.on("SIGCONT", passOn("SIGCONT"));
    inner.on("error", (err) => {
      process.stderr.write(`rhema: cannot start itself in a user namespace: ${err.message}\n`);
      process.exit(3);
    });
    inner.on("exit", (code, signal) => {
      if (signal === null) process.exit(code ?? 1);
      // Ended by a signal: the same end here, so whoever waits for rhema sees it.
      for (const s of [...PASSED_ON, "SIGTSTP", "SIGCONT"] as const) process.removeAllListeners(s);
      process.kill(process.pid, signal);
      process.exit(128 + (constants.signals[signal] ?? 0));
    });
  });
}
