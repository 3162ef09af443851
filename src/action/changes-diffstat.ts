/**
 * The pull request comment's diff stat (`comment-diffstat: true`): each trial's changes.patch read
 * back as `git diff --stat` would show it, per file, in a collapsed `<details>` block, so a
 * reviewer sees what the agent touched without opening the artifacts. Pure: the caller reads
 * the patches.
 */

/** One file of a patch: lines added and removed, or binary. */
export interface FileStat {
  path: string;
  added: number;
  removed: number;
  binary: boolean;
}

/** A trial's patch as the comment lists it. */
export interface TrialPatch {
  /** `suite/id` (with its trial when repeated). */
  label: string;
  /** The patch's text; null when it could not be read. */
  text: string | null;
  /** Cut at its size cap: the stat covers the part kept. */
  truncated: boolean;
}

const MAX_TRIALS = 20;
const MAX_FILES = 30;

/** The files of a git patch with their added and removed lines (`diff --git` sections; hunk lines counted). */
export function patchFileStats(text: string): FileStat[] {
  const files: FileStat[] = [];
  let current: FileStat | null = null;
  let inHunk = false;
  for (const line of text.split("\n")) {
    const header = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
    if (header) {
      current = { path: header[2]!, added: 0, removed: 0, binary: false };
      files.push(current);
      inHunk = false;
      continue;
    }
    if (current === null) continue;
    if (line.startsWith("@@")) inHunk = true;
    else if (!inHunk && /^Binary files .* differ$/.test(line)) current.binary = true;
    else if (inHunk && line.startsWith("+")) current.added++;
    else if (inHunk && line.startsWith("-")) current.removed++;
  }
  return files;
}

/** The collapsed block; "" when no trial has a patch with changes. */
export function diffstatComment(trials: readonly TrialPatch[]): string {
  const shown = trials.flatMap((t) => {
    const files = t.text === null ? null : patchFileStats(t.text);
    return files !== null && files.length === 0 ? [] : [{ ...t, files }];
  });
  if (shown.length === 0) return "";
  const blocks = shown.slice(0, MAX_TRIALS).map((t) => {
    if (t.files === null) return `**${t.label}**: changes.patch could not be read`;
    const rows = t.files.slice(0, MAX_FILES).map((f) => ` ${f.path} | ${f.binary ? "Bin" : `+${f.added} −${f.removed}`}`);
    const more = t.files.length - rows.length;
    const notes = [...(more > 0 ? [` …and ${more} more files`] : []), ...(t.truncated ? [" (the patch was cut at its size cap: files past it are not listed)"] : [])];
    return [`**${t.label}**`, "", "```text", ...rows, ...notes, "```"].join("\n");
  });
  const more = shown.length - blocks.length;
  const summary = `Changes: ${shown.length === 1 ? "1 trial" : `${shown.length} trials`} changed files`;
  return ["<details>", `<summary>${summary}</summary>`, "", ...blocks.flatMap((b) => [b, ""]), ...(more > 0 ? [`…and ${more} more trials: see the changes output`, ""] : []), "</details>", ""].join("\n");
}
