/**
 * bash builtins that turn text into code later or elsewhere, which a deny list could not
 * otherwise see: `trap` actions (judged as scripts), `alias`, `hash -p`, `enable -f`,
 * `complete -C`, `mapfile -C`, `fc`, `bind -x`, `declare -n`; variable names with an array
 * subscript (`read 'a[$(cmd)]'`, `printf -v`, `unset`, `declare`), which bash evaluates as
 * arithmetic — and arithmetic runs command substitutions; `let` and `declare -i` texts, and
 * the variables `declare -i` makes arithmetic on every later assignment; a declaration's
 * operand that is a compound array assignment in a string (`declare -a 'x=([$(cmd)]=1)'`) and
 * `compgen -W` word lists, which bash parses again and expands (their substitutions run); and
 * assignments to variables that make bash or other programs run code (`BASH_ENV`, `ENV`,
 * `PROMPT_COMMAND`, `PS4`, `PATH`, `LD_PRELOAD`, …), which only a rule spelling the variable
 * allows. It also names the variables a builtin fills with text it read (`read x`), since
 * arithmetic on such a variable is code too.
 */
import type { ShellWord } from "../grammar/shell-words.js";

export interface BuiltinEffects {
  /** Why the builtin can make text run as code, or null; only a rule naming it allows it. */
  unjudgeable: string | null;
  /** Words an allowing pattern must spell (`BASH_ENV=`). */
  mustName: string[];
  /** Scripts stored to run later (`trap 'ACTION' EXIT`). */
  laterScripts: string[];
  /** Variables the builtin assigns from text. */
  taints: string[];
  /** Dynamic variable-name operands, judged once the line's tainted variables are known. */
  nameWords: ShellWord[];
  /** Texts bash evaluates as arithmetic (`let` arguments, `declare -i` values). */
  arithmeticTexts: string[];
  /**
   * Sources bash parses again and expands as words, to walk for what they run: `x=(…)` from
   * `declare -a 'x=(…)'`, `: WORDS` from `compgen -W 'WORDS'`.
   */
  reparsed: string[];
  /** Variables given the integer attribute (`declare -i x`): text later assigned to them is arithmetic. */
  integers: string[];
  /** The builtin may leave the shell in another directory (`source`, `pushd`). */
  movesCwd: boolean;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INDEXED = /^[A-Za-z_][A-Za-z0-9_]*\[\d*\]$/;

/** Variables whose value bash or the programs it starts run as code or use to find programs. */
const CODE_VARIABLE = new RegExp(
  "^(BASH_ENV|ENV|PROMPT_COMMAND|PS[0-4]|SHELLOPTS|BASHOPTS|PATH|CDPATH|IFS|GLOBIGNORE|EXECIGNORE|BASH_LOADABLES_PATH|" +
  "HOME|TMPDIR|HISTFILE|PAGER|MANPAGER|EDITOR|VISUAL|BROWSER|TERMINAL|SHELL|LD_.*|DYLD_.*|GIT_.*|BASH_FUNC_.*|NODE_OPTIONS|" +
  "NODE_PATH|PYTHON.*|PERL5?(OPT|LIB)|RUBY(OPT|LIB)|npm_config_.*|NPM_CONFIG_.*|MAKEFLAGS|SSH_ASKPASS|SUDO_ASKPASS|" +
  "LESSOPEN|LESSCLOSE|GCONV_PATH|HOSTALIASES|LOCPATH|NLSPATH|RESOLV_HOST_CONF|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|CLASSPATH)$",
);

/** True when assigning `name` can make later commands run code the line chose. */
export function isCodeVariable(name: string): boolean {
  return CODE_VARIABLE.test(name);
}

function empty(): BuiltinEffects {
  return { unjudgeable: null, mustName: [], laterScripts: [], taints: [], nameWords: [], arithmeticTexts: [], reparsed: [], integers: [], movesCwd: false };
}

/**
 * A variable-name operand: a subscript other than a plain index is arithmetic, which can run
 * commands — the name is walked as the arithmetic bash evaluates (what it runs is judged) and,
 * since only a rule naming it may allow such a name, it is unjudgeable too.
 */
function checkName(word: ShellWord, effects: BuiltinEffects, builtin: string): void {
  if (word.kind !== "literal") {
    effects.nameWords.push(word);
    return;
  }
  const name = word.value.split("=")[0]!;
  if (IDENTIFIER.test(name) || INDEXED.test(name)) {
    effects.taints.push(name.replace(/\[.*$/, ""));
    return;
  }
  arithmetic(effects, name);
  effects.unjudgeable ??= `\`${builtin} ${word.raw}\`: bash evaluates the subscript in \`${name}\` as arithmetic, which can run commands`;
}

/** Text bash evaluates as arithmetic: checked (`arithmeticTexts`) and walked for the commands its subscripts run. */
function arithmetic(effects: BuiltinEffects, text: string): void {
  effects.arithmeticTexts.push(text);
  if (/[[$`]/.test(text)) effects.reparsed.push(`(( ${text} ))`);
}

/** Operands after options; `withValue` letters take the next word, given to `onValue`. */
function operandsAfterOptions(argv: readonly ShellWord[], withValue: string, onValue?: (letter: string, word: ShellWord) => void): ShellWord[] {
  let i = 1;
  for (; i < argv.length; i++) {
    const text = argv[i]!.value;
    if (argv[i]!.kind !== "literal" || !/^[-+]/.test(text) || text === "-" || text === "+") break;
    if (text === "--") { i++; break; }
    for (let c = 1; c < text.length; c++) {
      if (!withValue.includes(text[c]!)) continue;
      const value = c + 1 < text.length ? { ...argv[i]!, value: text.slice(c + 1), raw: text.slice(c + 1) } : argv[++i];
      if (value !== undefined) onValue?.(text[c]!, value);
      break;
    }
  }
  return argv.slice(i);
}

function hasFlag(argv: readonly ShellWord[], letter: string): boolean {
  return argv.slice(1).some((w) => w.kind === "literal" && /^-[A-Za-z]+$/.test(w.value) && w.value.includes(letter));
}

type Reader = (argv: readonly ShellWord[], effects: BuiltinEffects) => void;

const later = (why: string): Reader => (_argv, effects) => { effects.unjudgeable = why; };

function readTrap(argv: readonly ShellWord[], effects: BuiltinEffects): void {
  const operands = operandsAfterOptions(argv, "");
  if (operands.length === 0 || hasFlag(argv, "p") || hasFlag(argv, "l")) return;
  const action = operands[0]!;
  // `trap SIGNAL` alone resets it; anything else in first place is the action.
  if (operands.length === 1 && action.kind === "literal" && /^(SIG)?[A-Za-z0-9+-]+$/.test(action.value)) return;
  if (action.kind !== "literal") {
    effects.unjudgeable = `\`trap ${action.raw} …\` stores an action known only at run time`;
  } else if (action.value !== "-" && action.value !== "") {
    effects.laterScripts.push(action.value);
  }
}

/** A `NAME=(…)` operand the grammar itself read as an array: its words were walked where they stand. */
const PARSED_ARRAY = /^[A-Za-z_][A-Za-z0-9_]*\+?=\(/;

/**
 * `declare`, `local`, `typeset`, `readonly`, `export`: names (with subscripts) and values. A
 * value that starts with `(` in a string operand (`'x=(…)'`, `x="($v)"`) is parsed again by bash
 * as a compound array assignment whenever the variable is an array — by `-a`/`-A`, or from
 * before, which the line cannot know — so its words are expanded and its `[KEY]=` subscripts
 * evaluated: it is walked as the assignment bash reads.
 */
function readDeclaration(argv: readonly ShellWord[], effects: BuiltinEffects): void {
  const builtin = argv[0]!.value;
  const integer = hasFlag(argv, "i");
  if (hasFlag(argv, "n")) effects.unjudgeable = `\`${builtin} -n\` makes a name reference, which bash may evaluate as arithmetic`;
  if (hasFlag(argv, "f") || hasFlag(argv, "F")) return;
  for (const word of operandsAfterOptions(argv, "")) {
    const parsedArray = PARSED_ARRAY.test(word.raw);
    const assign = /\+?=/.exec(word.value);
    const name = assign === null ? word.value : word.value.slice(0, assign.index);
    if (parsedArray) effects.taints.push(name);
    else checkName(word, effects, builtin);
    const variable = name.replace(/\[.*$/s, "");
    if (integer && IDENTIFIER.test(variable)) effects.integers.push(variable);
    if (assign === null) continue;
    const value = word.value.slice(assign.index + assign[0].length);
    if (!parsedArray && value.startsWith("(")) effects.reparsed.push(`${name}=${value}`);
    if (isCodeVariable(variable)) {
      effects.unjudgeable ??= `\`${builtin} ${variable}=…\` sets a variable that makes bash or other programs run code`;
      effects.mustName.push(`${variable}=`);
    }
    if (integer) arithmetic(effects, value);
  }
  // An integer variable holds the number its text evaluated to, never the text.
  effects.taints = effects.taints.filter((t) => !effects.integers.includes(t));
}

function readRead(argv: readonly ShellWord[], effects: BuiltinEffects): void {
  const operands = operandsAfterOptions(argv, "adinNptu", (letter, word) => { if (letter === "a") checkName(word, effects, "read -a"); });
  if (operands.length === 0) effects.taints.push("REPLY");
  for (const word of operands) checkName(word, effects, "read");
}

function readMapfile(argv: readonly ShellWord[], effects: BuiltinEffects): void {
  const builtin = argv[0]!.value;
  const operands = operandsAfterOptions(argv, "dnOsuCc", (letter) => {
    if (letter === "C") effects.unjudgeable = `\`${builtin} -C\` runs its callback as a command for each line it reads`;
  });
  if (operands.length === 0) effects.taints.push("MAPFILE");
  for (const word of operands.slice(0, 1)) checkName(word, effects, builtin);
}

const BUILTINS: Readonly<Record<string, Reader>> = {
  trap: readTrap,
  alias: (argv, effects) => {
    if (argv.slice(1).some((w) => w.kind !== "literal" || w.value.includes("="))) {
      effects.unjudgeable = "`alias` defines text that later commands run in place of a name";
    }
  },
  hash: (argv, effects) => { if (hasFlag(argv, "p")) effects.unjudgeable = "`hash -p` makes a name run another program"; },
  enable: (argv, effects) => { if (hasFlag(argv, "f")) effects.unjudgeable = "`enable -f` loads a builtin from a shared object"; },
  complete: (argv, effects) => { if (hasFlag(argv, "C") || hasFlag(argv, "F")) effects.unjudgeable = "`complete -C`/`-F` stores a command to run later"; },
  compgen: (argv, effects) => {
    if (hasFlag(argv, "C") || hasFlag(argv, "F")) effects.unjudgeable = "`compgen -C`/`-F` runs a command it is given";
    // `compgen -W 'WORDS'` expands the word list again: its substitutions run.
    operandsAfterOptions(argv, "AGPSWXoCF", (letter, word) => {
      if (letter !== "W") return;
      if (word.kind === "literal") effects.reparsed.push(`: ${word.value}`);
      else effects.nameWords.push(word);
    });
  },
  fc: later("`fc` edits and runs commands from the history"),
  bind: (argv, effects) => { if (hasFlag(argv, "x")) effects.unjudgeable = "`bind -x` stores a command to run later"; },
  mapfile: readMapfile,
  readarray: readMapfile,
  read: readRead,
  printf: (argv, effects) => { operandsAfterOptions(argv, "v", (_l, word) => checkName(word, effects, "printf -v")); },
  getopts: (argv, effects) => {
    const name = argv[2];
    if (name !== undefined) checkName(name, effects, "getopts");
    effects.taints.push("OPTARG");
  },
  wait: (argv, effects) => { operandsAfterOptions(argv, "p", (_l, word) => checkName(word, effects, "wait -p")); },
  unset: (argv, effects) => { for (const word of operandsAfterOptions(argv, "")) if (!hasFlag(argv, "f")) checkName(word, effects, "unset"); },
  let: (argv, effects) => { for (const w of argv.slice(1)) if (w.kind === "literal") arithmetic(effects, w.value); else effects.arithmeticTexts.push(w.raw); },
  declare: readDeclaration,
  typeset: readDeclaration,
  local: readDeclaration,
  export: readDeclaration,
  readonly: readDeclaration,
  test: nameTests,
  "[": nameTests,
  source: (argv, effects) => { effects.movesCwd = true; sourceOperand(argv, effects); },
  ".": (argv, effects) => { effects.movesCwd = true; sourceOperand(argv, effects); },
  pushd: (_argv, effects) => { effects.movesCwd = true; },
  popd: (_argv, effects) => { effects.movesCwd = true; },
};

/** `test -v NAME`, `[ -R NAME ]`: NAME's subscript is evaluated. */
function nameTests(argv: readonly ShellWord[], effects: BuiltinEffects): void {
  argv.forEach((word, i) => {
    const next = argv[i + 1];
    if (word.kind === "literal" && (word.value === "-v" || word.value === "-R") && next !== undefined) checkName(next, effects, argv[0]!.value);
  });
}

const STDIN_LIKE = /^(-|\/dev\/(stdin|fd\/\d+|tty)|\/proc\/[^/]+\/fd\/\d+)$/;

/** `source FILE`: commands from its input, a process substitution or a name known at run time cannot be judged. */
function sourceOperand(argv: readonly ShellWord[], effects: BuiltinEffects): void {
  const file = argv[1]?.value === "--" ? argv[2] : argv[1];
  if (file === undefined) return;
  if (file.kind !== "literal" || STDIN_LIKE.test(file.value)) {
    effects.unjudgeable = `\`${argv[0]!.value} ${file.raw}\` runs commands from its input or from a file known only at run time`;
  }
}

/** What the builtin `argv[0]` does with text beyond running; nothing for other commands. */
export function builtinEffects(argv: readonly ShellWord[]): BuiltinEffects {
  const effects = empty();
  const name = argv[0];
  if (name === undefined || name.kind !== "literal") return effects;
  BUILTINS[name.value]?.(argv, effects);
  return effects;
}
