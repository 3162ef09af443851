/**
 * How the action's inputs stand to `rhema run`'s flags: the flags with no input (each with why),
 * and the rewrite that makes a message of the runner, written for the CLI (`--policy`, `pass
 * another --out`), name the action's input instead (`the \`policy\` input`). Every other run flag
 * is an input of the same name (`tasks` is the paths); a test holds action.yml to that, so a new
 * run flag needs an input or a line here.
 */
import { ACTION_INPUT_NAMES, type ActionInputName } from "./action-inputs.js";

/** `rhema run` flags the action has no input for, and why (the README and docs/action.md say the same). */
export const RUN_FLAGS_WITHOUT_INPUT: Readonly<Record<string, string>> = {
  json: "the step's log shows progress and each task's lines in a group; the event stream is events.jsonl in the run directory",
  junit: "the junit output gives the report's path; copy it in a later step",
  stats: "the stats output gives the report's path; copy it in a later step",
  summary: "the action always appends the summary to the job summary",
  add: "the run directory belongs to one workflow run (restored from its earlier attempts only); a new selection is a new `out`",
  restart: "the run directory belongs to one workflow run (restored from its earlier attempts only); start over with a new `out`",
};

/** The action's inputs that are not run flags: the paths, and what only the action does. */
export const ACTION_ONLY_INPUTS: readonly ActionInputName[] = ["tasks", "fail-on", "resume", "comment", "github-token", "baseline", "save-baseline", "compare-fail-on", "comment-diffstat", "upload-report", "retention-days"];

/** The input a run flag (without `--`) maps onto, or null when the action has none. */
export function inputForFlag(flag: string): ActionInputName | null {
  const input = ACTION_INPUT_NAMES.find((name) => name === flag);
  return input !== undefined && !ACTION_ONLY_INPUTS.includes(input) ? input : null;
}

/**
 * `text` with each run flag that has an input named as that input: "--policy" becomes "the
 * `policy` input", "another --out" "another `out` input", "no --policy" "no `policy` input".
 * Flags without an input and anything that is not a flag (`cp --sparse`) are left as they are.
 */
export function nameInputs(text: string): string {
  return text.replace(/(\b(?:the|another|an|no) )?(?<![\w-])--([a-z][a-z0-9-]*)(?![\w-])/g, (whole, article: string | undefined, flag: string) => {
    const input = inputForFlag(flag);
    if (input === null) return whole;
    return `${article ?? "the "}\`${input}\` input`;
  });
}
