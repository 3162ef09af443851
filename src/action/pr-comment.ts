/**
 * The pull request's comment (`comment: true`): one per pull request and shard, found again by
 * a hidden marker and updated in place, so re-runs never add a second one. Speaks the REST API
 * through `@actions/github` with the job's token; a token without write access (403) is a
 * warning for the caller to show, never a failed step.
 */
import { getOctokit } from "@actions/github";

/** GitHub's limit on a comment body is 65536 characters; leave room for the marker and links. */
const MAX_BODY_CHARS = 60_000;

export interface PrCommentTarget {
  /** `https://api.github.com`, or the test's server. */
  apiUrl: string;
  token: string;
  owner: string;
  repo: string;
  pullNumber: number;
}

export type PrCommentResult =
  | { kind: "created"; id: number }
  | { kind: "updated"; id: number }
  | { kind: "forbidden"; message: string };

/** The hidden line that identifies this workflow/job/shard's comment. */
export function commentMarker(scope: { workflow: string; job: string; shard: string | null }): string {
  return `<!-- rhema-action: ${scope.workflow} / ${scope.job} / shard ${scope.shard ?? "all"} -->`;
}

/** Where the comment links: the run's page, and the report artifact's when it was uploaded (report-artifact.ts). */
export interface CommentLinks {
  runUrl: string;
  reportUrl: string | null;
}

/** The comment's body: marker, the run's summary (cut to size), a link to the job summary and one to report.html's artifact. */
export function commentBody(marker: string, summaryMarkdown: string, links: CommentLinks): string {
  const summary = summaryMarkdown.length > MAX_BODY_CHARS
    ? `${summaryMarkdown.slice(0, MAX_BODY_CHARS)}\n\n… (cut; the whole summary is on the run page)`
    : summaryMarkdown;
  const report = links.reportUrl === null ? "" : ` · [report.html (artifact)](${links.reportUrl})`;
  return `${marker}\n${summary.trimEnd()}\n\n[Job summary and reports](${links.runUrl})${report}\n`;
}

/** Creates the comment, or updates the one carrying `marker`. Errors other than 403 are thrown. */
export async function upsertPrComment(target: PrCommentTarget, marker: string, body: string): Promise<PrCommentResult> {
  const octokit = getOctokit(target.token, { baseUrl: target.apiUrl });
  const where = { owner: target.owner, repo: target.repo };
  try {
    const comments = await octokit.paginate(octokit.rest.issues.listComments, { ...where, issue_number: target.pullNumber, per_page: 100 });
    const mine = comments.find((c) => typeof c.body === "string" && c.body.includes(marker));
    if (mine) {
      await octokit.rest.issues.updateComment({ ...where, comment_id: mine.id, body });
      return { kind: "updated", id: mine.id };
    }
    const created = await octokit.rest.issues.createComment({ ...where, issue_number: target.pullNumber, body });
    return { kind: "created", id: created.data.id };
  } catch (err) {
    if (isStatus(err, 403)) {
      return { kind: "forbidden", message: `the token cannot write comments on ${target.owner}/${target.repo}#${target.pullNumber} (403); give the job \`permissions: pull-requests: write\`` };
    }
    throw err;
  }
}

function isStatus(err: unknown, status: number): boolean {
  return typeof err === "object" && err !== null && (err as { status?: unknown }).status === status;
}
