/** `rhema validate` and `rhema report merge`. */
import { resolve } from "node:path";
import { mergeRunReports } from "../runner/reports/report-merge.js";
import { loadTasks } from "../runner/tasks/suite-loader.js";
import { resolveTaskApprovals } from "../runner/tasks/task-policy.js";
import { EXIT_OK, type ExitCode } from "./exit-codes.js";
import { print, type CliIo } from "./io.js";

/** Checks task files and every policy they use; runs nothing. Problems throw (exit 2). */
export async function validateCommand(args: { paths: string[]; policy?: string }, io: CliIo): Promise<ExitCode> {
  const loaded = await loadTasks(args.paths, { cwd: io.cwd });
  const approvals = await resolveTaskApprovals(loaded.tasks, { policyFlag: args.policy, cwd: io.cwd });
  for (const note of approvals.notes) print(io.stderr, `rhema: ${note}`);
  const suites = new Set(loaded.tasks.map((t) => t.suite));
  print(io.stdout, `valid: ${loaded.tasks.length} task(s) in ${suites.size} suite(s), ${approvals.policies} polic${approvals.policies === 1 ? "y" : "ies"}`);
  return EXIT_OK;
}

export async function reportMergeCommand(args: { dirs: string[]; out: string }, io: CliIo): Promise<ExitCode> {
  const outcome = await mergeRunReports(args.dirs.map((d) => resolve(io.cwd, d)), resolve(io.cwd, args.out), { cwd: io.cwd });
  for (const missing of outcome.missingTranscripts) print(io.stderr, `rhema: transcript not found, not copied: ${missing}`);
  print(io.stdout, `merged ${outcome.results.length} task result(s) from ${args.dirs.length} run(s): ${outcome.files.junit}, ${outcome.files.stats}, ${outcome.files.summary}`);
  return EXIT_OK;
}
