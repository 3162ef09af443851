/**
 * A task's side effects behind the run directory's lock (run-lock.ts): each model request, each
 * commit (and so each tool call: a call starts only once its `started` boundary is committed),
 * each setup command and each check first confirms that this runner still holds the lock, and
 * a lock found lost stops what is running — the request's stream, the command's process group.
 * A runner that was stalled while another took its run directory over thus starts nothing more
 * and writes nothing more: its next boundary throws `LockLostError`.
 */
import type { CommitHook } from "../../core/commit-hook.js";
import type { ModelProvider } from "../../core/provider.js";
import type { LockGuard } from "../run-dir/run-lock.js";
import type { CommandRunner } from "./command-runner.js";

/** `inner`, each request sent only while the lock is held, and cut when it is lost. */
export function lockedProvider(inner: ModelProvider, lock: LockGuard): ModelProvider {
  return {
    id: inner.id,
    // Its capabilities too: the agent compacts a scripted run with the elider.
    ...(inner.answersFromScript === true ? { answersFromScript: true } : {}),
    async *stream(req, signal) {
      await lock.confirm();
      yield* inner.stream(req, AbortSignal.any([signal, lock.lost]));
    },
  };
}

/** `inner`, each commit made only while the lock is held. */
export function lockedCommitHook(inner: CommitHook, lock: LockGuard): CommitHook {
  return async (commit) => {
    await lock.confirm();
    await inner(commit);
  };
}

/**
 * `inner`, each command started only while the lock is held and stopped (its whole group) when
 * it is lost; a command so stopped has no outcome to record: the loss is thrown instead.
 */
export function lockedCommandRunner(inner: CommandRunner, lock: LockGuard): CommandRunner {
  return async (req) => {
    await lock.confirm();
    const outcome = await inner({ ...req, signal: AbortSignal.any([req.signal, lock.lost]) });
    throwIfLost(lock);
    return outcome;
  };
}

/** `inner`, silent once the lock is lost: the task's event log is the new holder's to write. */
export function lockedSink<E>(inner: { emit(event: E): void | Promise<void> }, lock: LockGuard): { emit(event: E): void | Promise<void> } {
  return { emit: (event) => (lock.lost.aborted ? undefined : inner.emit(event)) };
}

/** Throws the `LockLostError` once the lock is lost. */
export function throwIfLost(lock: LockGuard | undefined): void {
  if (lock?.lost.aborted) throw lock.lost.reason;
}
