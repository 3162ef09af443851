/** Task results for report tests: a deterministic run of several suites, every status present. */
import { emptyTranscriptStats, cacheHitRate, type TranscriptStats } from "../../src/core/transcript-types.js";
import { TASK_RESULT_VERSION, type TaskResult } from "../../src/runner/run-dir/task-result.js";
import { type ReportMeta } from "../../src/runner/reports/report-meta.js";

export function sampleStats(seed: number): TranscriptStats {
  const stats = emptyTranscriptStats(8000);
  stats.requests = 3 + seed;
  stats.sections = 1 + (seed % 3);
  stats.inputTokens = 1000 + 10 * seed;
  stats.cacheReadTokens = 4000 + 100 * seed;
  stats.cacheWriteTokens = 500 + seed;
  stats.outputTokens = 200 + seed;
  stats.cacheHitRate = cacheHitRate(stats);
  return stats;
}

/** One result; `status` decides checks and error so the result is consistent. */
export function sampleResult(suite: string, id: string, status: TaskResult["status"], seed = 1): TaskResult {
  const started = Date.UTC(2025, 0, 2, 3, 4, 5) + seed * 60_000;
  const durationMs = 1_000 + seed * 1_234;
  const failed = status === "failed";
  return {
    version: TASK_RESULT_VERSION,
    suite,
    id,
    file: `/repo/tasks/${suite}/${id}.yaml`,
    contentHash: "ab".repeat(32),
    tags: ["nightly"],
    provider: "scripted",
    status,
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(started + durationMs).toISOString(),
    durationMs,
    steps: 2 + seed,
    stats: seed % 4 === 3 ? null : sampleStats(seed),
    checks: status === "stopped" ? [] : [
      { name: "unit tests", command: "npm test", exitCode: failed ? 1 : 0, passed: !failed, durationMs: 250, outputTail: failed ? "not ok 1 - adds\n# fail 1 ]]> <x/> & | pipes `tick`" : "ok", timedOut: false },
    ],
    ...(status === "errored" ? { error: { code: "step_cap", message: "the turn hit its step cap (40 steps)" } } : {}),
    ...(status === "stopped" ? {
      error: { code: "budget", message: "the task's cost budget of $0.0100 is spent ($0.0123): stopped before the next model request" },
      budget: { scope: "task" as const, measure: "cost" as const, limit: 0.01, spent: 0.0123 },
    } : {}),
    finalAnswer: status === "errored" ? "" : `Fixed ${id}.`,
    transcriptPath: `tasks/${suite}/${id}/events.jsonl`,
    policyDenials: seed % 2 === 0
      ? { count: 2, examples: [{ tool: "shell", rule: "no-push", reason: "no pushes from CI" }, { tool: "write_file", rule: null, reason: "default deny" }] }
      : { count: 0, examples: [] },
    resumed: seed % 3 === 0 ? 1 : 0,
  };
}

/** Nine results over three suites: passed, failed and errored tasks, stats on and off. */
export function sampleRun(): TaskResult[] {
  const statuses: TaskResult["status"][] = ["passed", "failed", "passed", "errored", "passed", "passed", "failed", "passed", "passed"];
  return statuses.map((status, index) => {
    const suite = ["arithmetic", "strings", "zeta"][index % 3]!;
    return sampleResult(suite, `task-${String(index).padStart(2, "0")}`, status, index);
  });
}

export function sampleMeta(overrides: Partial<ReportMeta> = {}): ReportMeta {
  return { runId: "run-1", startedAt: "2025-01-02T03:00:00.000Z", finishedAt: "2025-01-02T03:30:00.000Z", ...overrides };
}
