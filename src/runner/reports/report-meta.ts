/**
 * What reports know beyond the results (the run's id and times, its unfinished trials, their
 * plans, shards, the figures asked for): the meta every report is a pure function of, with the
 * results.
 */
import type { SkippedTask } from "../tasks/task-key.js";
import type { QuarantineEntry } from "../tasks/quarantine-file.js";
import type { TaskTrialPlan, UnfinishedTask } from "../run-dir/task-result.js";
import type { ProviderRefusal } from "../../core/errors.js";

/**
 * What reports know beyond the results. Reports depend only on results + meta, so a merge
 * of shards (startedAt = earliest, finishedAt = latest) reproduces an unsharded run's.
 */
export interface ReportMeta {
  runId: string;
  /** ISO time the run started. */
  startedAt: string;
  /** ISO time of this write (the run's end, once it has ended). */
  finishedAt: string;
  /** Reported as skipped test cases when given. */
  skipped?: readonly SkippedTask[];
  /** The run's tasks that have no result (interrupted, never started); each is reported. */
  unfinished?: readonly UnfinishedTask[];
  /** Tasks this invocation dropped from the run because the suite no longer defines them (their file deleted, their id renamed). */
  removed?: readonly { suite: string; id: string; file: string }[];
  /**
   * Time the run was actually running, summed over its resumes; without it, the span from
   * `startedAt` to `finishedAt` (which counts the gaps between resumes).
   */
  wallTimeMs?: number;
  /** A task file's path as reports show it (relative to the repository root), by absolute path; absent ones are shown as they are. */
  displayFiles?: Readonly<Record<string, string>>;
  /** The run directory as reports show it (relative to the repository root, like `displayFiles`): JUnit attaches each changes.patch from it; absent: no attachments. */
  runDirShown?: string;
  /** The run's shard, `i/n` (`--shard`); null or absent for an unsharded run and for a merge. */
  shard?: string | null;
  /** For merged reports (`report merge`): which shards they hold and which are missing; absent otherwise. */
  shards?: ShardCoverage | null;
  /** Each task's planned trials and gate (the manifest's); a task absent here has one trial and the default gate. */
  trialPlans?: readonly TaskTrialPlan[];
  /** The k's of pass@k and pass^k the reports show (`--pass-at 1,3`); absent or empty: none. */
  passAt?: readonly number[];
  /** What a JUnit testcase is (`--junit-cases`): a task (its trials as properties and flaky/rerun entries), each trial, or each check of a task; default task. */
  junitCases?: JunitCases;
  /** The quarantine list the run was given (`--quarantine`): its tasks' failures are reported but do not fail the gate; absent or null: none. */
  quarantine?: QuarantineRecord | null;
  /** The providers that refused the run (a dead key, a spent quota): the summary's one block; absent or empty: none. */
  refusals?: readonly ProviderRefusal[];
}

/** The quarantine list a run used, as reports record it (stats.json `quarantine`; `report merge` reads it back). */
export interface QuarantineRecord {
  /** The file, as the run was given it (absolute). */
  file: string;
  entries: QuarantineEntry[];
}

/** The JUnit testcase granularities (`--junit-cases`): per task (the default), per trial, per check. */
export const JUNIT_CASES = ["task", "trial", "check"] as const;

/** The JUnit testcase granularity (`--junit-cases`). */
export type JunitCases = (typeof JUNIT_CASES)[number];

/** The shards of an `n`-way split that merged reports hold, and those they lack (`--allow-partial`). */
export interface ShardCoverage {
  /** n: how many shards the matrix had. */
  count: number;
  /** `i/n` of each shard merged, by i. */
  merged: string[];
  /** `i/n` of each shard not merged, by i; empty when the merge is complete. */
  missing: string[];
}
