/**
 * What the static analysis of a command line finds (shell-analysis.ts makes it, decide reads
 * it): the simple commands it runs, the files it reads and writes, the substitutions it holds,
 * and what it cannot judge. Types only.
 */
import type { CwdSet } from "./shell-cwd.js";
import type { ShellAssignment, ShellWord } from "./grammar/shell-words.js";

export interface SimpleCommand {
  /** The command as written in the source. */
  text: string;
  /** Assignments in effect: the prefix (`A=1 cmd`) and those given to `env`. */
  env: ShellAssignment[];
  /** The command that runs, after wrappers; empty for a bare assignment or a handed-over script. */
  argv: ShellWord[];
  /** The argv as written and after each wrapper, outermost first (deny patterns see each). */
  layers: ShellWord[][];
  /** Outer layers that must also be allowed themselves (`sudo …`). */
  guarded: ShellWord[][];
  /** Why this command cannot be judged statically; non-empty denies it. */
  blockers: string[];
  /** Why the command hides what it runs (`eval "$X"`), or null; only a rule naming it allows it. */
  unjudgeable: string | null;
  /**
   * Words an allowing pattern must spell itself, beyond matching (`BASH_ENV=` in
   * `export BASH_ENV=x`): `export *` does not grant a variable that runs code.
   */
  mustName: string[];
  /** The directories the command may run in. */
  cwd: CwdSet;
}

/**
 * A file the command line reads or writes: through a redirection, or as an operand or option
 * value of a command known to read or write it (`tee F`, `sort -o F`, `cp A B`, `cat F`).
 */
export interface ShellFileAccess {
  access: "write" | "read";
  target: ShellWord;
  /** As written, e.g. `>> .github/x` or `sort -o out`. */
  text: string;
  /** Index in `commands` of the command it belongs to, or null (a redirected group). */
  owner: number | null;
  via: "redirect" | "operand";
  /**
   * A folder taken whole: `content` read (or written) with everything under it (`grep -r`,
   * `cp -r`, `rm -r`), `follow` the same through the links inside (`grep -R`, `find -L`,
   * `find -exec cat {}`, `diff -r`, `zip -r`), `entries` its own entries each looked at through
   * its link, no deeper (`ls -L dir`), `names` only listed (`ls -R`, `find`), `incoming` filled
   * with files named elsewhere (`tar x`, `unzip`, `wget`); null for one file.
   */
  tree: "content" | "follow" | "entries" | "names" | "incoming" | null;
  /** The directories the path is relative to. */
  cwd: CwdSet;
}

export interface ShellConstruct {
  kind: "command_substitution" | "process_substitution";
  /** As written, e.g. `$(git rev-parse HEAD)`. */
  text: string;
}

export interface ShellAnalysis {
  source: string;
  /** Where the grammar could not parse the command, or null. */
  syntaxError: string | null;
  commands: SimpleCommand[];
  files: ShellFileAccess[];
  constructs: ShellConstruct[];
  /** Syntax the analysis cannot judge (not tied to one command); non-empty denies. */
  blockers: string[];
  /**
   * Variables the line sets from text it chose (loop words, `read`, `${x:=…}`, assignments):
   * as an operand such a variable could name any path.
   */
  tainted: string[];
  /**
   * Variables only ever set by `for NAME in WORDS` loops, with those words: `$NAME` is one of
   * them (`for f in src/*.ts; do cat "$f"; done` reads what `src/*.ts` names).
   */
  loopChoices: Array<{ name: string; words: ShellWord[] }>;
}
