/** A trial's changes.patch as the reports write it (summary.md, junit.xml, the Action's comment). Pure. */
import type { TaskResult } from "../run-dir/task-result.js";

/** changes.patch in a line: `tasks/…/changes.patch (3 files, +10 −2)`, its cut said; or why there is none. */
export function changesLine(changes: NonNullable<TaskResult["changes"]>): string {
  if (changes.path === null) return `none (${changes.reason})`;
  const cut = changes.truncated ? `, cut: ${changes.leftOut} left out` : "";
  return `${changes.path} (${diffStat(changes)}${cut})`;
}

/** `3 files, +10 −2` (a binary file counted among the files). */
export function diffStat(changes: { files: number; insertions: number; deletions: number }): string {
  return `${changes.files} ${changes.files === 1 ? "file" : "files"}, +${changes.insertions} −${changes.deletions}`;
}
