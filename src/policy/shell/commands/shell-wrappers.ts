/**
 * Seeing through wrappers: programs that run another command — `env`, `sudo`, `nice`,
 * `ionice`, `timeout`, `flock`, `su -c`, `script -c`, `watch`, `xargs`, `parallel`,
 * `find -exec` and the rest (wrapper-specs.ts) — and that command is the one a policy must
 * judge: `xargs rm` is `rm`. `bash -c`, `su -c`, `eval` of a literal string hand the string
 * back to be parsed as a script; of anything else they stay as written, so only a rule naming
 * them can allow them. A shell reading its commands from its input (`… | sh`, `bash
 * /dev/stdin`, `su` with no `-c`) is unjudgeable the same way.
 *
 * Option parsing is strict: an option a wrapper does not know, or a dynamic word where an
 * option or the inner command should be, makes the command unjudgeable (a blocker).
 */
import { type ParsedOptions, hasOption, optionValues, parseOptions } from "./command-options.js";
import { type ShellAssignment, type ShellWord, literalWord, runtimeWord } from "../grammar/shell-words.js";
import { SHELLS, findExecCommands } from "./shell-programs.js";
import { readParallel, readScript, readSg, readSu, readWatch } from "./string-wrappers.js";
import { SPEC_WRAPPERS, type WrapperSpec } from "./wrapper-specs.js";
import { type WrapperReader, type WrapperStep, cannot, scriptStep } from "./wrapper-step.js";

export interface UnwrapResult {
  /** The command that finally runs; empty when a shell or eval hands over a script. */
  argv: ShellWord[];
  /** Assignments given to `env`. */
  env: ShellAssignment[];
  /** The argv as written and after each step, outermost first; deny patterns see every one. */
  layers: ShellWord[][];
  /** Layers that must be allowed in their own right as well (`sudo …`). */
  guarded: ShellWord[][];
  /** Further commands this one runs (`find -exec` bodies), to be unwrapped in turn. */
  nested: ShellWord[][];
  /** Literal scripts to parse and judge (`bash -c '…'`, `eval '…'`), and whether they run in this shell. */
  scripts: Array<{ text: string; here: boolean }>;
  /** Why the command cannot be judged, or null. */
  blocker: string | null;
  /** Why the command, as written, hides what it runs (`bash -c "$X"`): only a rule naming it allows it. */
  unjudgeable: string | null;
  /** Directories the inner command runs in, relative to the outer one (`env -C D`); a dynamic word is unknown. */
  directories: ShellWord[];
  /** Files wrappers write themselves (`strace -o F`, `script F`). */
  writes: ShellWord[];
  /** Files wrappers read themselves (`xargs -a F`, `parallel :::: F`). */
  reads: ShellWord[];
}

/** The basename of a literal command word (`/bin/rm` is `rm`), or null for a dynamic one. */
export function commandName(word: ShellWord | undefined): string | null {
  if (word === undefined || word.kind !== "literal") return null;
  const parts = word.value.split("/");
  return parts[parts.length - 1] ?? null;
}

function readSpecWrapper(spec: WrapperSpec): WrapperReader {
  return (words, name) => {
    // `nice -10 cmd`: a bare negative number right after `nice` is an adjustment.
    const second = words[1];
    const adjusts = name === "nice" && second?.kind === "literal" && /^-\d+$/.test(second.value);
    const cleaned = adjusts ? [words[0]!, ...words.slice(2)] : words;
    let parsed = parseOptions(cleaned, spec.options);
    const guarded = spec.guarded === true;
    if (parsed.problem) return { next: null, guarded, blocker: cannot(name, parsed.problem) };
    if (spec.noCommand !== undefined && hasOption(parsed, ...spec.noCommand)) return { next: null, guarded };
    const early = spec.scriptOptions === undefined ? [] : optionValues(parsed, ...spec.scriptOptions);
    if (early.length > 0) return scriptStep(name, early.at(-1)!.valueWord ?? literalWord(early.at(-1)!.value), { next: null, guarded });
    let at = parsed.next;
    for (let p = 0; p < (spec.positionals ?? 0); p++) {
      const word = cleaned[at];
      if (word === undefined) return { next: null, guarded };
      if (word.kind !== "literal" && word.multi) return { next: null, guarded, blocker: cannot(name, `\`${word.raw}\` could be several words`) };
      at++;
    }
    if (name === "flock") {
      // `flock FILE -c CMD`: options may follow the lock file; `flock FD` locks and runs nothing.
      if (/^\d+$/.test(cleaned[parsed.next]?.value ?? "")) return { next: null };
      const more = parseOptions(cleaned, spec.options, at);
      if (more.problem) return { next: null, blocker: cannot(name, more.problem) };
      parsed = { ...parsed, options: [...parsed.options, ...more.options] };
      at = more.next;
    }
    const step: WrapperStep = { next: null, guarded, writes: writtenValues(parsed, spec) };
    const directory = spec.directoryOptions === undefined ? [] : optionValues(parsed, ...spec.directoryOptions);
    if (directory.length > 0) step.directory = directory.at(-1)!.valueWord ?? literalWord(directory.at(-1)!.value);
    const script = spec.scriptOptions === undefined ? [] : optionValues(parsed, ...spec.scriptOptions);
    if (script.length > 0) return scriptStep(name, script.at(-1)!.valueWord ?? literalWord(script.at(-1)!.value), step);
    const rest = cleaned.slice(at);
    if (rest.length === 0 && spec.bareRunsShell) return { ...step, unjudgeable: `\`${name}\` with no command starts a shell that reads its commands from its input` };
    // With nothing to run (`exec 3>log`, bare `time`) the wrapper runs no command at all.
    return { ...step, next: rest };
  };
}

function writtenValues(parsed: ParsedOptions, spec: WrapperSpec): ShellWord[] {
  if (spec.writeOptions === undefined) return [];
  return optionValues(parsed, ...spec.writeOptions).map((o) => o.valueWord ?? literalWord(o.value));
}

const ENV_ASSIGNMENT = /^([^=]+)=/;

/** Splits `env -S`'s string the way env does: blanks separate, quotes and backslashes group. */
function splitEnvString(text: string): string[] | null {
  if (/[$`]|\\c/.test(text)) return null;
  const words: string[] = [];
  let current: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (/\s/.test(ch)) {
      if (current !== null) words.push(current);
      current = null;
    } else if (ch === "'" || ch === '"') {
      const end = text.indexOf(ch, i + 1);
      if (end < 0) return null;
      current = (current ?? "") + text.slice(i + 1, end);
      i = end;
    } else if (ch === "\\") {
      current = (current ?? "") + (text[++i] ?? "");
    } else if (ch === "#" && current === null) {
      break;
    } else {
      current = (current ?? "") + ch;
    }
  }
  if (current !== null) words.push(current);
  return words;
}

function readEnv(words: ShellWord[], name: string): WrapperStep {
  const parsed = parseOptions(words, {
    flags: "i0v", withValue: "uCSaP",
    longFlags: ["ignore-environment", "null", "debug", "list-signal-handling"],
    longWithValue: ["unset", "chdir", "split-string", "argv0"],
    longOptionalValue: ["block-signal", "default-signal", "ignore-signal"],
  });
  if (parsed.problem) return { next: null, blocker: cannot(name, parsed.problem) };
  let rest = words.slice(parsed.next);
  const split = optionValues(parsed, "S", "split-string");
  if (split.length > 0) {
    const pieces = splitEnvString(split.map((s) => s.value).join(" "));
    if (pieces === null || split.some((s) => s.valueWord !== undefined && s.valueWord.kind !== "literal")) {
      return { next: null, blocker: cannot("env -S", "its string holds expansions, which env expands at run time") };
    }
    rest = [...pieces.map(literalWord), ...rest];
  }
  const env: ShellAssignment[] = [];
  let i = 0;
  for (; i < rest.length; i++) {
    const word = rest[i]!;
    const match = ENV_ASSIGNMENT.exec(word.value);
    if (match === null) {
      if (word.kind !== "literal") return { next: null, blocker: cannot(name, `\`${word.raw}\` could be an assignment or the command`) };
      break;
    }
    const valueText = word.value.slice(match[0].length);
    env.push({ name: match[1]!, value: { ...word, value: valueText, raw: valueText }, raw: word.raw });
  }
  const next = rest.slice(i);
  const step: WrapperStep = { next: next.length > 0 ? next : null, env };
  const chdir = optionValues(parsed, "C", "chdir").at(-1);
  if (chdir !== undefined) step.directory = chdir.valueWord ?? literalWord(chdir.value);
  return step;
}

function readPrivileged(words: ShellWord[], name: string): WrapperStep {
  const spec = name === "doas"
    ? { flags: "nsL", withValue: "uC" }
    : {
      flags: "AbEHKknPSBNVlvise", withValue: "ugpCDrtTUhR",
      longFlags: ["preserve-env", "non-interactive", "login", "list", "shell", "edit", "stdin", "background", "reset-timestamp", "remove-timestamp"],
      longWithValue: ["user", "group", "chdir", "host", "prompt", "close-from", "role", "type", "other-user", "command-timeout"],
    };
  const parsed = parseOptions(words, spec);
  if (parsed.problem) return { next: null, guarded: true, blocker: cannot(name, parsed.problem) };
  if (hasOption(parsed, "e", "edit")) return { next: null, guarded: true, unjudgeable: `\`${name} -e\` edits files as another user` };
  if (name === "doas" && hasOption(parsed, "C")) return { next: null, guarded: true, unjudgeable: "`doas -C` reads a configuration file" };
  const rest = words.slice(parsed.next);
  const step: WrapperStep = { next: rest.length > 0 ? rest : null, guarded: true };
  const chdir = optionValues(parsed, "D", "chdir").at(-1);
  if (chdir !== undefined) step.directory = chdir.valueWord ?? literalWord(chdir.value);
  if (rest.length === 0 && hasOption(parsed, "s", "shell", "i", "login")) {
    return { ...step, unjudgeable: `\`${name}\` starts a shell that reads its commands from its input` };
  }
  return step;
}

/** `xargs [opts] CMD ARGS` runs `CMD ARGS <input…>`; with no CMD it runs `echo`. */
function readXargs(words: ShellWord[], name: string): WrapperStep {
  const parsed = parseOptions(words, {
    flags: "0oprtx", withValue: "adEILnPs", optionalValue: "eil",
    longFlags: ["null", "open-tty", "interactive", "no-run-if-empty", "verbose", "exit", "show-limits"],
    longWithValue: ["arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"],
  });
  if (parsed.problem) return { next: null, blocker: cannot(name, parsed.problem) };
  const rest = words.slice(parsed.next);
  const command = rest.length > 0 ? rest : [literalWord("echo")];
  const reads = optionValues(parsed, "a", "arg-file").map((o) => o.valueWord ?? literalWord(o.value));
  const replaceOption = optionValues(parsed, "I", "replace", "i").at(-1);
  const replace = replaceOption === undefined ? undefined : replaceOption.value === "" && replaceOption.name === "i" ? "{}" : replaceOption.value;
  if (replace !== undefined && replace !== "") {
    return { next: command.map((w, i) => (i > 0 && w.value.includes(replace) ? runtimeWord(w.raw) : w)), reads };
  }
  return { next: [...command, runtimeWord("<xargs input>")], reads };
}

const SHELL_INPUT = /^\/dev\/(stdin|fd\/\d+|tty)$|^\/proc\/[^/]+\/fd\/\d+$/;

/**
 * `bash [opts] -c STRING [args]`: the string is a script; a non-literal one stays unjudged, and
 * so does a shell reading its commands from its input (`… | sh`, `bash -s`, `bash /dev/stdin`,
 * `bash <(curl …)`).
 */
function readShell(words: ShellWord[], name: string): WrapperStep {
  let runsString = false;
  let readsInput = false;
  let i = 1;
  for (; i < words.length; i++) {
    const word = words[i]!;
    if (word.kind !== "literal") break;
    const text = word.value;
    if (text === "--" || text === "-") {
      i++;
      if (text === "-") readsInput = true;
      break;
    }
    if (/^[-+][oO]$/.test(text) || text === "--rcfile" || text === "--init-file") { i++; continue; }
    if (text.startsWith("--")) continue;
    if (/^[-+][A-Za-z]+$/.test(text)) {
      if (text.startsWith("-") && text.includes("c")) runsString = true;
      if (text.startsWith("-") && text.includes("s")) readsInput = true;
      continue;
    }
    break;
  }
  if (!runsString && (readsInput || i >= words.length)) {
    return { next: null, unjudgeable: `\`${name}\` reads the commands it runs from its input` };
  }
  const script = words[i];
  if (!runsString) {
    if (script !== undefined && (script.kind !== "literal" || SHELL_INPUT.test(script.value))) {
      return { next: null, unjudgeable: `\`${name} ${script.raw}\` runs commands from its input or from a file known only at run time` };
    }
    return { next: null };
  }
  if (script === undefined || script.kind !== "literal") {
    return { next: null, unjudgeable: `\`${name} -c\` runs a string known only at run time (\`${script?.raw ?? ""}\`)` };
  }
  return { next: [], script: script.value };
}

function readEval(words: ShellWord[]): WrapperStep {
  const rest = words.slice(1);
  if (rest.some((w) => w.kind !== "literal")) {
    return { next: null, unjudgeable: `\`eval\` runs a string known only at run time (\`${rest.map((w) => w.raw).join(" ")}\`)` };
  }
  return { next: [], script: rest.map((w) => w.value).join(" "), scriptHere: true };
}

const WRAPPERS: Readonly<Record<string, WrapperReader>> = {
  ...Object.fromEntries(Object.entries(SPEC_WRAPPERS).map(([name, spec]) => [name, readSpecWrapper(spec)])),
  env: readEnv,
  sudo: readPrivileged,
  doas: readPrivileged,
  su: readSu,
  runuser: readSu,
  script: readScript,
  sg: readSg,
  watch: readWatch,
  parallel: readParallel,
  xargs: readXargs,
  eval: readEval,
  ...Object.fromEntries([...SHELLS].map((name) => [name, readShell])),
};

/** True when `name` is a wrapper this module sees through. */
export function isWrapper(name: string): boolean {
  return name in WRAPPERS || name === "find";
}

/** Follows wrappers from `argv` to the command that runs. */
export function unwrapCommand(argv: ShellWord[]): UnwrapResult {
  const result: UnwrapResult = {
    argv, env: [], layers: [argv], guarded: [], nested: [], scripts: [], blocker: null, unjudgeable: null, directories: [], writes: [],
    reads: [],
  };
  let current = argv;
  for (let step = 0; step < 16; step++) {
    const name = commandName(current[0]);
    if (name === "find") {
      const exec = findExecCommands(current);
      result.nested.push(...exec.commands);
      result.blocker = exec.blocker;
      break;
    }
    const reader = name === null ? undefined : WRAPPERS[name];
    if (reader === undefined || name === null) break;
    const next = reader(current, name);
    if (next.guarded) result.guarded.push(current);
    if (next.env) result.env.push(...next.env);
    if (next.directory) result.directories.push(next.directory);
    if (next.writes) result.writes.push(...next.writes);
    if (next.reads) result.reads.push(...next.reads);
    if (next.unjudgeable) result.unjudgeable = next.unjudgeable;
    if (next.blocker) {
      result.blocker = next.blocker;
      break;
    }
    if (next.script !== undefined) result.scripts.push({ text: next.script, here: next.scriptHere === true });
    if (next.next === null) break;
    current = next.next;
    if (current.length === 0) break;
    result.layers.push(current);
  }
  result.argv = current;
  return result;
}
