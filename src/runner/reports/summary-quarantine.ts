/**
 * summary.md's **Quarantine** section: with a quarantine list (`--quarantine`), one row per
 * quarantined task of the run — its status, the file's reason, and what it means: a task that did
 * not pass is reported (its failure is in the Failures section) but does not fail the run; one
 * that passed could leave quarantine. Nothing without a quarantined task in the run. Pure.
 */
import { taskKey } from "../tasks/task-key.js";
import type { TaskTrials } from "./task-trials.js";

const STATUS_TEXT: Record<TaskTrials["status"], string> = {
  passed: "✅ passed",
  failed: "❌ failed",
  errored: "💥 errored",
  stopped: "🛑 stopped",
  unfinished: "⏳ unfinished",
};

/** The section's Markdown, or "" when no task of the run is quarantined. */
export function quarantineSection(tasks: readonly TaskTrials[]): string {
  const quarantined = tasks.filter((task) => task.quarantine !== null);
  if (quarantined.length === 0) return "";
  const rows = quarantined.map((task) => {
    const trials = task.planned > 1 ? ` (${task.figures.passes} of ${task.figures.trials} trials)` : "";
    return `| 🔒 | \`${cell(taskKey(task))}\` | ${STATUS_TEXT[task.status]}${trials} | ${cell(task.quarantine?.reason ?? "—")} | ${meaning(task)} |`;
  });
  const failing = quarantined.filter((task) => task.status !== "passed" && task.status !== "unfinished").length;
  return [
    "#### Quarantine",
    "",
    `${quarantined.length} quarantined ${quarantined.length === 1 ? "task" : "tasks"} (\`--quarantine\`), ${failing} not passing: ` +
      "their failures are reported but do not fail the run.",
    "",
    "| | task | status | reason | |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

function meaning(task: TaskTrials): string {
  switch (task.status) {
    case "passed":
      return "passed: could leave quarantine";
    case "unfinished":
      return "no verdict yet";
    default:
      return "reported, does not fail the run";
  }
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}
