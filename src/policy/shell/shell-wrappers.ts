/**
 * Seeing through wrappers: `env`, `command`, `builtin`, `exec`, `nohup`, `time`, `timeout N`,
 * `nice`, `stdbuf`, `setsid`, `coproc`, `busybox`, `sudo`/`doas`, `xargs CMD` and `find … -exec CMD ;` run another
 * command, and that command is the one a policy must judge — `xargs rm` is `rm`. `bash -c`,
 * `sh -c` and `eval` of a literal string hand the string back to be parsed as a script; of
 * anything else they stay as written, so only a rule naming them can allow them.
 *
 * Option parsing is strict: an option a wrapper spec does not know, or a dynamic word where an
 * option or the inner command should be, makes the command unjudgeable (a blocker), because
 * guessing wrong about where the inner command starts is exactly how a deny rule is slipped.
 */
import { type ShellWord, literalWord, runtimeWord } from "./shell-words.js";

export interface ShellAssignment {
  name: string;
  value: ShellWord;
  /** As written, e.g. `NODE_ENV=test`. */
  raw: string;
}

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
  /** Literal scripts to parse and judge (`bash -c '…'`, `eval '…'`). */
  scripts: string[];
  /** Why the command cannot be judged, or null. */
  blocker: string | null;
  /** Why the command, as written, hides what it runs (`bash -c "$X"`): only a rule naming it allows it. */
  unjudgeable: string | null;
  /** True when the command changes directory for what it runs (`env -C DIR`). */
  changesDirectory: boolean;
}

/** The basename of a literal command word (`/bin/rm` is `rm`), or null for a dynamic one. */
export function commandName(word: ShellWord | undefined): string | null {
  if (word === undefined || word.kind !== "literal") return null;
  const parts = word.value.split("/");
  return parts[parts.length - 1] ?? null;
}

interface OptionSpec {
  /** Single-letter options that take no value. */
  flags: string;
  /** Single-letter options that take a value (attached or the next word). */
  withValue: string;
  /** Long options that take no value. */
  longFlags?: readonly string[];
  /** Long options that take a value (`--x=v` or `--x v`). */
  longWithValue?: readonly string[];
}

interface ParsedOptions {
  /** Index of the first word after the options. */
  next: number;
  /** Options seen, by letter or long name, with their values. */
  seen: Map<string, string>;
  blocker: string | null;
}

/** Parses leading options of `words` (from index 1) by `spec`; stops at `--` or the first operand. */
function parseOptions(words: ShellWord[], spec: OptionSpec, name: string): ParsedOptions {
  const seen = new Map<string, string>();
  let i = 1;
  const fail = (why: string): ParsedOptions => ({ next: i, seen, blocker: `cannot see through \`${name}\`: ${why}` });
  while (i < words.length) {
    const word = words[i]!;
    if (word.kind !== "literal") return fail(`\`${word.raw}\` could be an option or the command`);
    const text = word.value;
    if (text === "--") return { next: i + 1, seen, blocker: null };
    if (!text.startsWith("-") || text === "-") break;
    if (text.startsWith("--")) {
      const eq = text.indexOf("=");
      const long = eq < 0 ? text.slice(2) : text.slice(2, eq);
      if (spec.longWithValue?.includes(long)) {
        if (eq >= 0) seen.set(long, text.slice(eq + 1));
        else {
          const value = words[++i];
          if (value === undefined || value.kind !== "literal") return fail(`\`--${long}\` needs a literal value`);
          seen.set(long, value.value);
        }
      } else if (spec.longFlags?.includes(long) && eq < 0) seen.set(long, "");
      else return fail(`unknown option \`${text}\``);
      i++;
      continue;
    }
    for (let c = 1; c < text.length; c++) {
      const letter = text[c]!;
      if (spec.flags.includes(letter)) {
        seen.set(letter, "");
      } else if (spec.withValue.includes(letter)) {
        if (c + 1 < text.length) seen.set(letter, text.slice(c + 1));
        else {
          const value = words[++i];
          if (value === undefined || value.kind !== "literal") return fail(`\`-${letter}\` needs a literal value`);
          seen.set(letter, value.value);
        }
        break;
      } else return fail(`unknown option \`-${letter}\``);
    }
    i++;
  }
  return { next: i, seen, blocker: null };
}

/** One step through a wrapper. `next: null` means the wrapper itself is what runs. */
interface WrapperStep {
  next: ShellWord[] | null;
  env?: ShellAssignment[];
  guarded?: boolean;
  script?: string;
  blocker?: string;
  unjudgeable?: string;
  changesDirectory?: boolean;
}

type WrapperReader = (words: ShellWord[], name: string) => WrapperStep;

/** Wrappers whose options are fully described by a spec and whose operands are the command. */
const SIMPLE_WRAPPERS: Readonly<Record<string, OptionSpec>> = {
  command: { flags: "pvV", withValue: "" },
  builtin: { flags: "", withValue: "" },
  exec: { flags: "cl", withValue: "a" },
  nohup: { flags: "", withValue: "" },
  time: { flags: "pv", withValue: "f" },
  nice: { flags: "", withValue: "n", longWithValue: ["adjustment"] },
  stdbuf: { flags: "", withValue: "ioe", longWithValue: ["input", "output", "error"] },
  setsid: { flags: "cfw", withValue: "", longFlags: ["ctty", "fork", "wait"] },
  coproc: { flags: "", withValue: "" },
  busybox: { flags: "", withValue: "" },
};

function readSimpleWrapper(spec: OptionSpec): WrapperReader {
  return (words, name) => {
    // `nice -10 cmd`: a bare negative number right after `nice` is an adjustment.
    const second = words[1];
    const adjusts = name === "nice" && second?.kind === "literal" && /^-\d+$/.test(second.value);
    const cleaned = adjusts ? [words[0]!, ...words.slice(2)] : words;
    const parsed = parseOptions(cleaned, spec, name);
    if (parsed.blocker) return { next: null, blocker: parsed.blocker };
    // `command -v x` only looks `x` up: the wrapper itself is what runs.
    if (name === "command" && (parsed.seen.has("v") || parsed.seen.has("V"))) return { next: null };
    // With nothing to run (`exec 3>log`, bare `time`) the wrapper runs no command at all.
    return { next: cleaned.slice(parsed.next) };
  };
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;

function readEnv(words: ShellWord[], name: string): WrapperStep {
  const parsed = parseOptions(words, {
    flags: "i0v",
    withValue: "uCS",
    longFlags: ["ignore-environment", "null", "debug"],
    longWithValue: ["unset", "chdir", "split-string"],
  }, name);
  if (parsed.blocker) return { next: null, blocker: parsed.blocker };
  if (parsed.seen.has("S") || parsed.seen.has("split-string")) {
    return { next: null, blocker: "cannot see through `env -S`: it splits a string into a command at run time" };
  }
  const env: ShellAssignment[] = [];
  let i = parsed.next;
  for (; i < words.length; i++) {
    const word = words[i]!;
    const match = ASSIGNMENT.exec(word.value);
    if (match === null) {
      if (word.kind !== "literal") return { next: null, blocker: `cannot see through \`env\`: \`${word.raw}\` could be an assignment or the command` };
      break;
    }
    const valueText = word.value.slice(match[0].length);
    env.push({ name: match[1]!, value: { ...word, value: valueText, raw: valueText }, raw: word.raw });
  }
  const rest = words.slice(i);
  const changesDirectory = parsed.seen.has("C") || parsed.seen.has("chdir");
  return { next: rest.length > 0 ? rest : null, env, changesDirectory };
}

function readTimeout(words: ShellWord[], name: string): WrapperStep {
  const parsed = parseOptions(words, {
    flags: "v",
    withValue: "sk",
    longFlags: ["preserve-status", "foreground", "verbose"],
    longWithValue: ["signal", "kill-after"],
  }, name);
  if (parsed.blocker) return { next: null, blocker: parsed.blocker };
  const duration = words[parsed.next];
  if (duration === undefined) return { next: null };
  if (duration.kind !== "literal") return { next: null, blocker: "cannot see through `timeout`: its duration is not literal" };
  const rest = words.slice(parsed.next + 1);
  return { next: rest.length > 0 ? rest : null };
}

function readPrivileged(words: ShellWord[], name: string): WrapperStep {
  const spec: OptionSpec = name === "doas"
    ? { flags: "nL", withValue: "uC" }
    : { flags: "AbEHKknPSBNVlv", withValue: "ugpCDrtTUhR", longFlags: ["preserve-env", "non-interactive", "login", "list"], longWithValue: ["user", "group", "chdir", "host"] };
  const parsed = parseOptions(words, spec, name);
  if (parsed.blocker) return { next: null, guarded: true, blocker: parsed.blocker };
  if (parsed.seen.has("D") || parsed.seen.has("chdir") || parsed.seen.has("C")) {
    return { next: null, guarded: true, blocker: `cannot see through \`${name}\`: it changes directory` };
  }
  const rest = words.slice(parsed.next);
  return { next: rest.length > 0 ? rest : null, guarded: true };
}

/** `xargs [opts] CMD ARGS` runs `CMD ARGS <input…>`; with no CMD it runs `echo`. */
function readXargs(words: ShellWord[], name: string): WrapperStep {
  const parsed = parseOptions(words, {
    flags: "0oprtx",
    withValue: "adEILnPs",
    longFlags: ["null", "open-tty", "interactive", "no-run-if-empty", "verbose", "exit", "show-limits"],
    longWithValue: ["arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"],
  }, name);
  if (parsed.blocker) return { next: null, blocker: parsed.blocker };
  const rest = words.slice(parsed.next);
  const command = rest.length > 0 ? rest : [literalWord("echo")];
  const replace = parsed.seen.get("I") ?? parsed.seen.get("replace");
  if (replace !== undefined && replace !== "") {
    return { next: command.map((w, i) => (i > 0 && w.value.includes(replace) ? runtimeWord(w.raw) : w)) };
  }
  return { next: [...command, runtimeWord("<xargs input>")] };
}

const SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh", "ash", "mksh"]);

/**
 * `bash [opts] -c STRING [args]`: the string is a script; a non-literal one stays unjudged, and
 * so does a shell reading its commands from standard input (`… | sh`, `bash -s`).
 */
function readShell(words: ShellWord[], name: string): WrapperStep {
  let runsString = false;
  let readsInput = false;
  let i = 1;
  for (; i < words.length; i++) {
    const word = words[i]!;
    if (word.kind !== "literal") break;
    const text = word.value;
    if (text === "--" || text === "-") { i++; break; }
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
  if (!runsString) return { next: null };
  const script = words[i];
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
  return { next: [], script: rest.map((w) => w.value).join(" ") };
}

const WRAPPERS: Readonly<Record<string, WrapperReader>> = {
  ...Object.fromEntries(Object.entries(SIMPLE_WRAPPERS).map(([name, spec]) => [name, readSimpleWrapper(spec)])),
  env: readEnv,
  timeout: readTimeout,
  sudo: readPrivileged,
  doas: readPrivileged,
  xargs: readXargs,
  eval: readEval,
  ...Object.fromEntries([...SHELLS].map((name) => [name, readShell])),
};

const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/** The commands `find … -exec CMD … ;` (or `+`) runs, with `{}` as a run-time word. */
export function findExecCommands(words: ShellWord[]): { commands: ShellWord[][]; blocker: string | null } {
  const commands: ShellWord[][] = [];
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!;
    if (word.kind !== "literal") {
      if (word.kind === "glob") continue;
      return { commands, blocker: `cannot see through \`find\`: \`${word.raw}\` could be -exec` };
    }
    if (!FIND_EXEC.has(word.value)) continue;
    const body: ShellWord[] = [];
    let j = i + 1;
    for (; j < words.length; j++) {
      const part = words[j]!;
      if (part.kind === "literal" && (part.value === ";" || (part.value === "+" && body.at(-1)?.value === "{}"))) break;
      body.push(part.kind === "literal" && part.value.includes("{}") ? runtimeWord(part.raw) : part);
    }
    if (j >= words.length) return { commands, blocker: `cannot see through \`find\`: \`${word.value}\` has no terminating \`;\` or \`+\`` };
    if (body.length === 0) return { commands, blocker: `cannot see through \`find\`: \`${word.value}\` names no command` };
    commands.push(body);
    i = j;
  }
  return { commands, blocker: null };
}

/** Follows wrappers from `argv` to the command that runs. */
export function unwrapCommand(argv: ShellWord[]): UnwrapResult {
  const result: UnwrapResult = {
    argv, env: [], layers: [argv], guarded: [], nested: [], scripts: [], blocker: null, unjudgeable: null, changesDirectory: false,
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
    if (next.changesDirectory) result.changesDirectory = true;
    if (next.unjudgeable) result.unjudgeable = next.unjudgeable;
    if (next.blocker) {
      result.blocker = next.blocker;
      break;
    }
    if (next.script !== undefined) result.scripts.push(next.script);
    if (next.next === null) break;
    current = next.next;
    if (current.length === 0) break;
    result.layers.push(current);
  }
  result.argv = current;
  return result;
}
