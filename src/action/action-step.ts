/**
 * One step of the action as a process: the main step or the post step that saves the run
 * directory. Owns the process: the signals, the cache adapter, the step's result. GitHub cancels a
 * job with SIGINT, then SIGTERM 7.5 s later, then SIGKILL: the first signal starts the shutdown
 * (checkpoints and reports), the second is noted and ignored so it cannot cut that shutdown short
 * (runner/execute/shutdown-signals, shared with the CLI). Called by the bundle's entry (main.ts,
 * which tells the steps apart by the main step's state) and by the source entries
 * (main-entry.ts, post-entry.ts) that `@github/local-action` loads.
 */
import * as core from "@actions/core";
import { actionsCache, folderCache, type RunDirCache } from "./run-cache.js";
import { runAction, runPostAction } from "./run-action.js";
import { installShutdownSignals } from "../runner/execute/shutdown-signals.js";
import { stallNetFor } from "../runner/execute/stall-net.js";
import { routeSdkWarnings } from "../providers/sdk-warnings.js";

export type ActionPhase = "main" | "post";

/** The Actions cache, or a folder when RHEMA_ACTION_CACHE_DIR names one (tests, self-hosted runners). */
function chooseCache(env: NodeJS.ProcessEnv): RunDirCache {
  return env.RHEMA_ACTION_CACHE_DIR ? folderCache(env.RHEMA_ACTION_CACHE_DIR) : actionsCache();
}

/** Runs one step; its failure is left in core (setFailed), never thrown. */
export async function runActionStep(phase: ActionPhase): Promise<void> {
  const controller = new AbortController();
  installShutdownSignals(process, {
    shutdown: () => controller.abort(),
    note: (message) => core.info(`rhema: ${message}`),
    force: () => {
      core.setFailed("rhema: stopped at once by a third signal; the run directory's checkpoints resume it");
      process.exit(1);
    },
  });
  // An event loop that empties before the step ends must never read as success.
  const net = stallNetFor(process, (message) => {
    core.setFailed(`rhema: internal error: ${message}`);
    process.exit(1);
  });
  // The SDKs' bare console.warn (a deprecated model, on every request): one ::warning per message.
  routeSdkWarnings(console, (message) => core.warning(`rhema: ${message}`));
  const cache = chooseCache(process.env);
  try {
    if (phase === "post") await runPostAction(cache, { env: process.env, cwd: process.cwd() });
    else await runAction({ env: process.env, cwd: process.cwd(), pid: process.pid, interrupt: controller.signal, stalled: net.stalled, cache });
  } catch (err) {
    core.setFailed(`rhema: ${err instanceof Error ? err.message : String(err)}`);
    if (process.env.RHEMA_DEBUG && err instanceof Error && err.stack) core.debug(err.stack);
  } finally {
    net.finish();
  }
}
