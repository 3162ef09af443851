/**
 * The action's entry (bundled into action-dist/index.js): the main step, or — when the main
 * step left its state — the post step that saves the run directory. Owns the process: the
 * signals, the cache adapter, the exit code. GitHub cancels a job with SIGINT, then SIGTERM
 * 7.5 s later, then SIGKILL: the first signal starts the shutdown (checkpoints and reports),
 * and later ones are noted and ignored so they cannot cut that shutdown short.
 */
import * as core from "@actions/core";
import { actionsCache, folderCache, type RunDirCache } from "./run-cache.js";
import { runAction, runPostAction, STATE } from "./run-action.js";

/** Aborts on the first SIGINT or SIGTERM; any later one is only logged. */
export function installShutdownSignals(onFirst: (signal: string) => void): void {
  let shuttingDown = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (shuttingDown) {
      core.info(`rhema: ${signal} during shutdown: still writing checkpoints and reports`);
      return;
    }
    shuttingDown = true;
    core.info(`rhema: ${signal}: checkpointing and writing reports`);
    onFirst(signal);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, onSignal);
    // signal-exit (write-file-atomic's temp-file cleanup) re-raises a signal when it counts no
    // listener but its own — and it counts its subscribers twice, so one listener of ours reads
    // as none and a SIGTERM mid-write would kill the shutdown. A second one keeps it honest.
    process.on(signal, () => {});
  }
}

/** The Actions cache, or a folder when RHEMA_ACTION_CACHE_DIR names one (tests, self-hosted runners). */
function chooseCache(env: NodeJS.ProcessEnv): RunDirCache {
  return env.RHEMA_ACTION_CACHE_DIR ? folderCache(env.RHEMA_ACTION_CACHE_DIR) : actionsCache();
}

async function main(): Promise<void> {
  const controller = new AbortController();
  installShutdownSignals(() => controller.abort());
  const cache = chooseCache(process.env);
  try {
    if (core.getState(STATE.isPost) === "true") await runPostAction(cache);
    else await runAction({ env: process.env, cwd: process.cwd(), pid: process.pid, interrupt: controller.signal, cache });
  } catch (err) {
    core.setFailed(`rhema: ${err instanceof Error ? err.message : String(err)}`);
    if (process.env.RHEMA_DEBUG && err instanceof Error && err.stack) core.debug(err.stack);
  }
}

await main();
