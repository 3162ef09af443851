/**
 * The files a command reads and writes through its operands and options, for the commands
 * whose file arguments are known (file-command-table.ts): `sort -o F` writes F, `uniq A B`
 * writes B, `cp A B` reads A and writes B, `grep -r x src` reads all of src, `grep -R` follows
 * the links inside. An allow rule for the command does not grant these writes: they are judged
 * like redirections, by the rules that govern writing. A command not in the table is judged by
 * its name and operands alone.
 */
import { type OptionSpec, type ParsedOptions, hasOption, optionValues, parseOptions } from "./command-options.js";
import type { ShellFileAccess } from "../shell-model.js";
import { type ShellWord, literalWord } from "../grammar/shell-words.js";

export type FileRole = "read" | "write";
export type TreeKind = ShellFileAccess["tree"];

export interface FileUse {
  word: ShellWord;
  access: FileRole;
  tree: TreeKind;
}

export interface CommandFiles {
  uses: FileUse[];
  /** Why the command runs something it names (`sort --compress-program=sh`), or null. */
  unjudgeable: string | null;
  /** What an allowing pattern must spell to allow that (`--compress-program`). */
  mustName: string[];
  /** Directories the operands are relative to (`tar -C D`, `patch -d D`). */
  directories: ShellWord[];
}

/** What one command's words mean, given its parsed options and operands. */
export interface FileCommandSpec {
  options: OptionSpec;
  /** Option values that are files: by option name. */
  values?: Readonly<Record<string, FileRole>>;
  /** Options whose value names a program the command runs. */
  runs?: readonly string[];
  /** Options whose value is the directory the operands are relative to. */
  directory?: readonly string[];
  /** The operands' roles. */
  operands: (operands: ShellWord[], parsed: ParsedOptions) => FileUse[];
}

export const use = (word: ShellWord, access: FileRole, tree: TreeKind = null): FileUse => ({ word, access, tree });

/** Every operand is read (one file each), or, with `recursive`, read whole. */
export function readsAll(recursive?: (parsed: ParsedOptions) => TreeKind, implicit?: string) {
  return (operands: ShellWord[], parsed: ParsedOptions): FileUse[] => {
    const tree = recursive?.(parsed) ?? null;
    if (operands.length === 0 && tree !== null && implicit !== undefined) return [use(literalWord(implicit), "read", tree)];
    return operands.map((w) => use(w, "read", tree));
  };
}

/** Every operand is written (created, changed or deleted); with `recursive`, everything under it. */
export function writesAll(recursive?: (parsed: ParsedOptions) => boolean, skipFirst = 0) {
  return (operands: ShellWord[], parsed: ParsedOptions): FileUse[] => {
    const tree: TreeKind = recursive?.(parsed) ? "content" : null;
    return operands.slice(skipFirst).map((w) => use(w, "write", tree));
  };
}

/** The first operand is a pattern or program unless an option gave one (`grep -e`, `sed -f`). */
export function afterPattern(givenBy: readonly string[], rest: (operands: ShellWord[], parsed: ParsedOptions) => FileUse[]) {
  return (operands: ShellWord[], parsed: ParsedOptions): FileUse[] =>
    rest(hasOption(parsed, ...givenBy) ? operands : operands.slice(1), parsed);
}

/** `cp SRC… DEST`, `cp -t DIR SRC…`: sources read (whole with -r), the destination written. */
export function copies(options: { movesSources?: boolean; linkTargets?: boolean }) {
  return (operands: ShellWord[], parsed: ParsedOptions): FileUse[] => {
    const recursive = hasOption(parsed, "r", "R", "recursive", "a", "archive");
    const follow = hasOption(parsed, "L", "dereference");
    const tree: TreeKind = recursive ? (follow ? "follow" : "content") : null;
    const target = optionValues(parsed, "t", "target-directory").at(-1);
    const dest = target !== undefined ? (target.valueWord ?? literalWord(target.value)) : operands.length > 1 ? operands.at(-1)! : null;
    const sources = target !== undefined || operands.length <= 1 ? operands : operands.slice(0, -1);
    const uses: FileUse[] = [];
    for (const source of sources) {
      uses.push(use(options.linkTargets ? linkTarget(source, dest, parsed) : source, "read", options.linkTargets ? null : tree));
      if (options.movesSources) uses.push(use(source, "write", recursive ? "content" : null));
    }
    if (dest !== null) uses.push(use(dest, "write", recursive ? "content" : null));
    else if (options.linkTargets && sources[0] !== undefined && sources[0].kind === "literal") {
      uses.push(use(literalWord(sources[0].value.split("/").pop() || "."), "write"));
    }
    return uses;
  };
}

/** A relative symbolic link's target is relative to the link's folder, not the current one. */
function linkTarget(target: ShellWord, link: ShellWord | null, parsed: ParsedOptions): ShellWord {
  const symbolic = hasOption(parsed, "s", "symbolic");
  if (!symbolic || target.kind !== "literal" || target.value.startsWith("/") || link === null || link.kind !== "literal") return target;
  const slash = link.value.lastIndexOf("/");
  return slash < 0 ? target : literalWord(`${link.value.slice(0, slash)}/${target.value}`);
}

/** Reads a command's file arguments by its spec; options are read leniently (unknown ones are flags). */
export function filesBySpec(argv: readonly ShellWord[], spec: FileCommandSpec): CommandFiles {
  const parsed = parseOptions(argv, spec.options, 1, false);
  const uses: FileUse[] = [];
  for (const option of parsed.options) {
    const role = spec.values?.[option.name];
    if (role !== undefined && option.value !== "" && option.value !== "-") uses.push(use(option.valueWord ?? literalWord(option.value), role));
  }
  const runs = spec.runs === undefined ? undefined : optionValues(parsed, ...spec.runs)[0];
  const flag = runs === undefined ? "" : `${runs.name.length > 1 ? "--" : "-"}${runs.name}`;
  const unjudgeable = runs === undefined ? null : `\`${argv[0]!.raw} ${flag}\` runs the program \`${runs.value}\``;
  const directories = spec.directory === undefined ? [] : optionValues(parsed, ...spec.directory).map((o) => o.valueWord ?? literalWord(o.value));
  uses.push(...spec.operands(parsed.operands.filter((w) => !(w.kind === "literal" && w.value === "-")), parsed));
  return { uses, unjudgeable, mustName: runs === undefined ? [] : [flag], directories };
}
