/**
 * Reading a command's leading options by a spec, the way getopt does: bundled letters (`-uo F`),
 * values attached or in the next word, long options with `=` or a following word, `--` ending
 * the options. Strict by default: an option the spec does not know, or a dynamic word where an
 * option could stand, is a problem the caller turns into a blocker — guessing wrong about where
 * the operands start is exactly how a deny rule is slipped.
 */
import type { ShellWord } from "../grammar/shell-words.js";

export interface OptionSpec {
  /** Single-letter options that take no value. */
  flags: string;
  /** Single-letter options that take a value (attached or the next word). */
  withValue: string;
  /** Single-letter options whose value, if any, is attached (`-e[EOF]`). */
  optionalValue?: string;
  /** Long options that take no value. */
  longFlags?: readonly string[];
  /** Long options that take a value (`--x=v` or `--x v`). */
  longWithValue?: readonly string[];
  /** Long options whose value, if any, follows `=` (`--mount[=FILE]`). */
  longOptionalValue?: readonly string[];
  /** Options stop at the first operand (POSIX); false lets them follow operands (GNU). Default true. */
  stopAtOperand?: boolean;
}

/** One option as read: `name` is the letter or long name, `value` its value ("" for none). */
export interface ReadOption {
  name: string;
  value: string;
  /** The word holding the value, when it was the next word. */
  valueWord?: ShellWord;
}

export interface ParsedOptions {
  /** Index of the first word after the options (with `stopAtOperand`). */
  next: number;
  options: ReadOption[];
  /** Words that are not options, in order (all of them when options may follow operands). */
  operands: ShellWord[];
  /** Why the options could not be read, or null. */
  problem: string | null;
}

/** True when the word is an option the spec names (`o` or `output`). */
export function hasOption(parsed: ParsedOptions, ...names: string[]): boolean {
  return parsed.options.some((o) => names.includes(o.name));
}

/** The values given to any of `names`, in order. */
export function optionValues(parsed: ParsedOptions, ...names: string[]): ReadOption[] {
  return parsed.options.filter((o) => names.includes(o.name));
}

/**
 * Reads options from `words[start]` on. `strict` (default) reports unknown options and dynamic
 * words; otherwise an unknown option is taken as a flag and a dynamic word as an operand.
 */
export function parseOptions(words: readonly ShellWord[], spec: OptionSpec, start = 1, strict = true): ParsedOptions {
  const options: ReadOption[] = [];
  const operands: ShellWord[] = [];
  const stop = spec.stopAtOperand !== false;
  let i = start;
  const fail = (problem: string): ParsedOptions => ({ next: i, options, operands, problem });
  while (i < words.length) {
    const word = words[i]!;
    if (word.kind !== "literal") {
      if (strict) return fail(`\`${word.raw}\` could be an option or an operand`);
      operands.push(word);
      i++;
      if (stop) break;
      continue;
    }
    const text = word.value;
    if (text === "--") {
      operands.push(...words.slice(i + 1));
      return { next: i + 1, options, operands, problem: null };
    }
    if (!text.startsWith("-") || text === "-") {
      if (stop) break;
      operands.push(word);
      i++;
      continue;
    }
    const read = text.startsWith("--") ? readLong(words, i, spec) : readShort(words, i, spec, strict);
    if (typeof read === "string") {
      if (strict) return fail(read);
      // Leniently, an unknown long option is a flag, or carries the value after its `=`.
      const eq = text.indexOf("=");
      options.push({ name: text.slice(2, eq < 0 ? undefined : eq), value: eq < 0 ? "" : text.slice(eq + 1) });
      i++;
      continue;
    }
    options.push(...read.options);
    i = read.next;
  }
  if (stop) operands.push(...words.slice(i));
  return { next: i, options, operands, problem: null };
}

type Read = { options: ReadOption[]; next: number } | string;

/** getopt takes an unambiguous prefix of a long option for the option (`--out=F` is `--output=F`). */
function longName(written: string, spec: OptionSpec): string {
  const all = [...(spec.longWithValue ?? []), ...(spec.longFlags ?? []), ...(spec.longOptionalValue ?? [])];
  if (all.includes(written)) return written;
  const candidates = all.filter((name) => name.startsWith(written));
  return candidates.length === 1 ? candidates[0]! : written;
}

function readLong(words: readonly ShellWord[], i: number, spec: OptionSpec): Read {
  const text = words[i]!.value;
  const eq = text.indexOf("=");
  const name = longName(eq < 0 ? text.slice(2) : text.slice(2, eq), spec);
  if (spec.longWithValue?.includes(name)) {
    if (eq >= 0) return { options: [{ name, value: text.slice(eq + 1) }], next: i + 1 };
    const value = words[i + 1];
    if (value === undefined || value.multi) return `\`--${name}\` needs a value that is one word`;
    return { options: [{ name, value: value.value, valueWord: value }], next: i + 2 };
  }
  if (spec.longOptionalValue?.includes(name)) return { options: [{ name, value: eq < 0 ? "" : text.slice(eq + 1) }], next: i + 1 };
  if (spec.longFlags?.includes(name) && eq < 0) return { options: [{ name, value: "" }], next: i + 1 };
  return `unknown option \`${text}\``;
}

function readShort(words: readonly ShellWord[], i: number, spec: OptionSpec, strict: boolean): Read {
  const text = words[i]!.value;
  const options: ReadOption[] = [];
  for (let c = 1; c < text.length; c++) {
    const letter = text[c]!;
    if (spec.flags.includes(letter)) {
      options.push({ name: letter, value: "" });
    } else if (spec.withValue.includes(letter)) {
      if (c + 1 < text.length) return { options: [...options, { name: letter, value: text.slice(c + 1) }], next: i + 1 };
      const value = words[i + 1];
      if (value === undefined || value.multi) return `\`-${letter}\` needs a value that is one word`;
      return { options: [...options, { name: letter, value: value.value, valueWord: value }], next: i + 2 };
    } else if (spec.optionalValue?.includes(letter)) {
      return { options: [...options, { name: letter, value: text.slice(c + 1) }], next: i + 1 };
    } else if (strict) {
      return `unknown option \`-${letter}\``;
    } else {
      options.push({ name: letter, value: "" });
    }
  }
  return { options, next: i + 1 };
}
