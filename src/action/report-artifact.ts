/**
 * The run's reports as a workflow artifact (`upload-report`): report.html beside junit.xml,
 * stats.json and summary.md, zipped from the run directory by `@actions/artifact` under a name
 * of its own per job, shard and attempt, so a shard matrix and a re-run never collide (artifact
 * names are unique in a workflow run); a name another step of the run took already (a matrix
 * over something else than shards, two steps of one job) is refused by the service, and the
 * upload is made again as `<name>-2`, `-3`, …. The SDK is imported only here and only when uploading:
 * it stays out of the runs that upload nothing, and out of the bundle's first chunk. An upload
 * that cannot be made is an outcome for the caller to warn about, never a throw: the reports
 * stay in the run directory whatever happens here.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { RUN_FILES } from "../runner/run-dir/run-dir.js";

/** The Action output naming the uploaded artifact's page ("" when nothing was uploaded). */
export const REPORT_URL_OUTPUT = "report-url";

/** The run directory's files the artifact holds, those present. */
export const REPORT_FILES: readonly string[] = [RUN_FILES.html, RUN_FILES.junit, RUN_FILES.stats, RUN_FILES.summary];

/** How many names an upload tries (`name`, `name-2`, …) before it gives up on a taken name. */
const NAME_TRIES = 32;

/** What an artifact name may not hold (`@actions/artifact`'s validateArtifactName). */
const ARTIFACT_NAME_FORBIDDEN = /[":<>|*?\\/\r\n]/g;

export type ReportUpload =
  | { kind: "uploaded"; name: string; id: number; url: string; files: string[] }
  | { kind: "failed"; name: string; message: string };

/** Where the run sits: GITHUB_JOB, the `shard` input (`i/n`) or null, GITHUB_RUN_ATTEMPT. */
export interface ReportArtifactScope {
  job: string;
  shard: string | null;
  attempt: number;
}

/** `rhema-report-<job>-<i-of-n | all>-<attempt>`, with what artifact names forbid made `_`. */
export function reportArtifactName(scope: ReportArtifactScope): string {
  const shard = scope.shard === null ? "all" : scope.shard.replace(/\s+/g, "").replace("/", "-of-");
  return `rhema-report-${scope.job}-${shard}-${scope.attempt}`.replace(ARTIFACT_NAME_FORBIDDEN, "_");
}

/** The artifact's page: `${GITHUB_SERVER_URL}/${GITHUB_REPOSITORY}/actions/runs/${GITHUB_RUN_ID}/artifacts/${id}`. */
export function reportArtifactUrl(env: Readonly<Record<string, string | undefined>>, id: number): string {
  return `${env.GITHUB_SERVER_URL || "https://github.com"}/${env.GITHUB_REPOSITORY ?? ""}/actions/runs/${env.GITHUB_RUN_ID ?? ""}/artifacts/${id}`;
}

/**
 * Uploads the run directory's reports as the artifact `name` (root: the run directory, so the
 * zip holds `report.html`, `junit.xml`, … at its top), kept `retentionDays` or, when null, as
 * long as the repository keeps artifacts. Never throws: a missing artifact service (the runner
 * gives JavaScript actions ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL), no reports, or an
 * error of the service is a `failed` outcome saying why.
 */
export async function uploadReportArtifact(runDir: string, name: string, opts: { env: Readonly<Record<string, string | undefined>>; retentionDays: number | null }): Promise<ReportUpload> {
  const missing = ["ACTIONS_RUNTIME_TOKEN", "ACTIONS_RESULTS_URL"].filter((v) => !opts.env[v]);
  if (missing.length > 0) return { kind: "failed", name, message: `no artifact service here (${missing.join(" and ")} unset)` };
  const files = REPORT_FILES.filter((f) => existsSync(join(runDir, f)));
  if (files.length === 0) return { kind: "failed", name, message: `no reports in ${runDir}` };
  try {
    const { DefaultArtifactClient } = await import("@actions/artifact");
    const client = new DefaultArtifactClient();
    for (let n = 1; ; n++) {
      const tried = n === 1 ? name : `${name}-${n}`;
      try {
        const uploaded = await client.uploadArtifact(tried, files.map((f) => join(runDir, f)), runDir, opts.retentionDays === null ? {} : { retentionDays: opts.retentionDays });
        if (uploaded.id === undefined) return { kind: "failed", name: tried, message: "the artifact service gave no artifact id" };
        return { kind: "uploaded", name: tried, id: uploaded.id, url: reportArtifactUrl(opts.env, uploaded.id), files };
      } catch (err) {
        if (!isNameTaken(err) || n >= NAME_TRIES) throw err;
      }
    }
  } catch (err) {
    return { kind: "failed", name, message: err instanceof Error ? err.message : String(err) };
  }
}

/** The service's refusal of a name the run holds already: a 409 (the SDK says it in its message only). */
function isNameTaken(err: unknown): boolean {
  return err instanceof Error && /\(409\)/.test(err.message);
}
