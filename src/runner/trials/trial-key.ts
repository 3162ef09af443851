/**
 * A trial's identity (issue 21): a task, a variant (null: the suite as written — variants arrive
 * with the matrix), and its repeat number from 1. Two spellings: the label people read and type
 * (`suite/id` for a task's only trial, `suite/id#3`, `suite/id@variant#3`), and the folder the run
 * directory keeps it in (`tasks/<suite>/<id>/<variant|default>/<n>`), which never holds `#` or `@`.
 * Suite and task names are letters, digits, `.`, `_` and `-`; a variant may also hold `=` and `,`
 * (a matrix cell's id, `model=sonnet,transcript=64k`), so neither spelling is ambiguous.
 */

import { compareTasks } from "../tasks/task-key.js";

export interface TrialKey {
  suite: string;
  id: string;
  /** null: no variant (the folder says `default`); else a matrix cell's id. */
  variant: string | null;
  /** 1-based. */
  repeat: number;
}

/** The folder name of the trials that have no variant; no variant may be named so. */
export const NO_VARIANT_FOLDER = "default";

/** How many trials the trial's task has per variant, and whether the run has variants: what the label must tell apart. */
export interface LabelContext {
  repeats: number;
  variants: boolean;
}

/** `suite/id`, `suite/id#3`, `suite/id@variant`, `suite/id@variant#3`: only what tells this trial from its siblings. */
export function trialLabel(key: TrialKey, context: LabelContext): string {
  const variant = context.variants && key.variant !== null ? `@${key.variant}` : "";
  const repeat = context.repeats > 1 ? `#${key.repeat}` : "";
  return `${key.suite}/${key.id}${variant}${repeat}`;
}

/** The trial's folder under the run directory's `tasks/`, as path segments. */
export function trialFolderSegments(key: TrialKey): [suite: string, id: string, variant: string, repeat: string] {
  return [key.suite, key.id, key.variant ?? NO_VARIANT_FOLDER, String(key.repeat)];
}

const NAME = "[A-Za-z0-9][A-Za-z0-9._-]*";
/** A variant: a matrix cell's id, `axis=id` joined by `,` (`model=sonnet,transcript=64k`): a name that may also hold `=` and `,`. */
const VARIANT = "[A-Za-z0-9][A-Za-z0-9._=,-]*";
/** A variant's folder name: never `#`, `@`, `/` (VARIANT), and never `default`, the folder of no variant. */
export const VARIANT_NAME_PATTERN = new RegExp(`^${VARIANT}$`);
const LABEL = new RegExp(`^(${NAME})/(${NAME})(?:@(${VARIANT}))?(?:#([1-9][0-9]*))?$`);

/** A label read back (e.g. from a `--filter`): the repeat is null when the label names every repeat. */
export type ParsedLabel = Omit<TrialKey, "repeat"> & { repeat: number | null };

/** Reads a label; null when it is not one. */
export function parseTrialLabel(text: string): ParsedLabel | null {
  const m = LABEL.exec(text);
  if (!m) return null;
  const repeat = m[4] === undefined ? null : Number(m[4]);
  if (repeat !== null && !Number.isSafeInteger(repeat)) return null;
  return { suite: m[1]!, id: m[2]!, variant: m[3] ?? null, repeat };
}

/** Every trial of each task: its variants (none: one null variant) times its repeats, in report order. */
export function expandTrials(
  tasks: readonly { suite: string; id: string; repeats: number }[],
  variants: readonly string[] = [],
): TrialKey[] {
  const axes = variants.length === 0 ? [null] : variants;
  const trials: TrialKey[] = [];
  for (const task of tasks) {
    if (!Number.isSafeInteger(task.repeats) || task.repeats < 1) {
      throw new RangeError(`expandTrials: ${task.suite}/${task.id} has ${task.repeats} repeats; expected a whole number from 1`);
    }
    for (const variant of axes) {
      for (let repeat = 1; repeat <= task.repeats; repeat++) trials.push({ suite: task.suite, id: task.id, variant, repeat });
    }
  }
  return trials.sort(compareTrials);
}

/** The one order of trials: suite, id (code units, locale-free), no variant before variants, then repeat by number. */
export function compareTrials(a: TrialKey, b: TrialKey): number {
  return compareTasks(a, b) || a.repeat - b.repeat;
}
