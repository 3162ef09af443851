/**
 * One step through a wrapper, as the wrapper readers (shell-wrappers.ts, string-wrappers.ts)
 * report it: the words that run next, or a script handed over, or why it cannot be seen through.
 */
import type { ShellAssignment, ShellWord } from "../grammar/shell-words.js";

/** One step through a wrapper. `next: null` means the wrapper itself is what runs. */
export interface WrapperStep {
  next: ShellWord[] | null;
  env?: ShellAssignment[];
  guarded?: boolean;
  script?: string;
  /** The script runs in the current shell (`eval`), not a child. */
  scriptHere?: boolean;
  blocker?: string;
  unjudgeable?: string;
  directory?: ShellWord;
  writes?: ShellWord[];
  /** Files the wrapper reads itself (`xargs -a F`). */
  reads?: ShellWord[];
}

export type WrapperReader = (words: ShellWord[], name: string) => WrapperStep;

export const cannot = (name: string, why: string): string => `cannot see through \`${name}\`: ${why}`;

/** A wrapper handing over a command line: literal, it is a script; otherwise it hides what runs. */
export function scriptStep(name: string, word: ShellWord, step: WrapperStep = { next: null }): WrapperStep {
  if (word.kind !== "literal") return { ...step, next: null, unjudgeable: `\`${name}\` runs a command line known only at run time (\`${word.raw}\`)` };
  return { ...step, next: [], script: word.value };
}

