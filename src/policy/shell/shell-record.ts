/**
 * Recording one simple command: seen through its wrappers (shell-wrappers.ts) and git's global
 * options (git-command.ts), with the files its operands and options read and write
 * (file-command-table.ts), what its builtin does with text (shell-builtins.ts), the directory it
 * runs in and where it leaves the shell (`cd`), and the scripts it hands over, analysed in turn.
 * A command the analysis does not know also offers deny rules every tail of its words and every
 * command line among its arguments (`fakeroot rm x`, `runner 'git push'`): a program that runs
 * its arguments is how a deny rule is slipped.
 */
import { type AnalysisState, mark, taint, widenSince } from "./analysis-state.js";
import { commandFiles, isFileCommand } from "./commands/file-command-table.js";
import { gitProgramName, readGit } from "./commands/git-command.js";
import { builtinEffects } from "./commands/shell-builtins.js";
import { type CwdFlow, type CwdSet, UNKNOWN_CWD, anyExit, enterDirectory, sameCwds, stays, unionCwds } from "./shell-cwd.js";
import type { SimpleCommand } from "./shell-model.js";
import { INERT_COMMANDS } from "./commands/shell-programs.js";
import { isWrapper, unwrapCommand, commandName } from "./commands/shell-wrappers.js";
import type { ShellAssignment, ShellWord } from "./grammar/shell-words.js";

const MAX_SCRIPT_DEPTH = 4;

const shown = (text: string): string => text.slice(0, 60);

const RESERVED_WORDS = new Set([
  "{", "}", "!", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in",
  "select", "then", "time", "until", "while",
]);

export interface CommandSource {
  text: string;
  env: ShellAssignment[];
  argv: ShellWord[];
}

/** The directory set after entering each of `directories` (a dynamic one is unknown). */
function within(cwd: CwdSet, directories: readonly ShellWord[]): CwdSet {
  return directories.reduce((set, dir) => enterDirectory(set, dir.kind === "literal" ? dir.value : null), cwd);
}

/** Unwraps and records one command (and what it runs); returns its index and where it leaves the shell. */
export function recordCommand(state: AnalysisState, source: CommandSource, cwd: CwdSet): { index: number; flow: CwdFlow } {
  const unwrapped = unwrapCommand(source.argv);
  const command: SimpleCommand = {
    text: source.text,
    env: [...source.env, ...unwrapped.env],
    argv: unwrapped.argv,
    layers: unwrapped.layers,
    guarded: unwrapped.guarded,
    blockers: unwrapped.blocker === null ? [] : [unwrapped.blocker],
    unjudgeable: unwrapped.unjudgeable,
    mustName: [],
    cwd: within(cwd, unwrapped.directories),
  };
  const name = command.argv[0];
  if (name?.kind === "literal" && RESERVED_WORDS.has(name.value)) {
    // `time { …; }` and `coproc N { …; }` are keywords to bash but words to the grammar.
    command.blockers.push(`\`${name.value}\` in command position (in \`${source.text.slice(0, 60)}\`) is a bash keyword the analysis cannot place`);
  }
  const index = state.result.commands.push(command) - 1;
  const program = readProgram(command);
  recordFiles(state, command, index, program, unwrapped);
  const builtin = builtinEffects(command.argv);
  if (builtin.unjudgeable !== null) command.unjudgeable ??= builtin.unjudgeable;
  command.mustName.push(...builtin.mustName);
  for (const name of builtin.taints) taint(state, name);
  for (const name of builtin.integers) if (!state.integers.has(name)) state.integers.set(name, index);
  for (const text of builtin.reparsed) {
    // What bash parses again runs where the command does; text that does not parse cannot be judged.
    if (!state.scanWords(text, state, command.cwd)) {
      command.unjudgeable ??= `\`${shown(source.text)}\`: bash parses \`${shown(text)}\` again and expands it, and it cannot be read the way bash does`;
    }
  }
  if (builtin.nameWords.length > 0 || builtin.arithmeticTexts.length > 0) {
    state.pending.push({ names: [], texts: builtin.arithmeticTexts, nameWords: builtin.nameWords, owner: index, where: `\`${source.text.slice(0, 60)}\`` });
  }
  addHiddenLayers(state, command);
  let flow = directoryFlow(command, cwd, builtin.movesCwd);
  for (const script of unwrapped.scripts) {
    const after = nestedScript(state, script.text, script.here ? anyExit(flow) : command.cwd);
    if (script.here) flow = { ok: after.ok, fail: unionCwds(after.fail, cwd) };
  }
  for (const script of builtin.laterScripts) {
    const start = mark(state);
    const after = nestedScript(state, script, cwd);
    widenSince(state, start, "anywhere");
    if (!sameCwds(anyExit(after), cwd)) flow = stays(unionCwds(anyExit(flow), UNKNOWN_CWD));
  }
  for (const nested of unwrapped.nested) recordCommand(state, { text: source.text, env: [], argv: nested }, command.cwd);
  return { index, flow };
}

interface Program {
  /** The argv whose file operands to read (git without its global options). */
  argv: ShellWord[];
  /** Paths git's global options name (`--git-dir`, `--work-tree`). */
  paths: ShellWord[];
}

/** git's global options and `git-push`-style names: adds the layer deny rules match. */
function readProgram(command: SimpleCommand): Program {
  let argv = command.argv;
  const asGit = gitProgramName(argv[0]);
  if (asGit !== null) {
    argv = [...asGit, ...argv.slice(1)];
    command.layers.push(argv);
  }
  if (commandName(argv[0]) !== "git") return { argv, paths: [] };
  const view = readGit(argv);
  if (view.blocker !== null) command.blockers.push(view.blocker);
  if (view.unjudgeable !== null && command.unjudgeable === null) {
    command.unjudgeable = view.unjudgeable;
    command.mustName.push(...view.mustName);
  }
  command.cwd = within(command.cwd, view.directories);
  if (view.normalized !== null) command.layers.push(view.normalized);
  return { argv: view.normalized ?? argv, paths: view.paths };
}

function recordFiles(state: AnalysisState, command: SimpleCommand, owner: number, program: Program, wrapped: { writes: ShellWord[]; reads: ShellWord[] }): void {
  const files = commandFiles(program.argv);
  if (files.unjudgeable !== null && command.unjudgeable === null) {
    command.unjudgeable = files.unjudgeable;
    command.mustName.push(...files.mustName);
  }
  const cwd = within(command.cwd, files.directories);
  const text = command.text;
  for (const use of files.uses) {
    state.result.files.push({ access: use.access, target: use.word, text, owner, via: "operand", tree: use.tree, cwd });
  }
  for (const word of wrapped.writes) {
    state.result.files.push({ access: "write", target: word, text, owner, via: "operand", tree: null, cwd: command.cwd });
  }
  for (const word of wrapped.reads) {
    state.result.files.push({ access: "read", target: word, text, owner, via: "operand", tree: null, cwd: command.cwd });
  }
  for (const path of program.paths) {
    state.result.files.push({ access: "read", target: path, text, owner, via: "operand", tree: "content", cwd: command.cwd });
  }
}

/** `cd DIR` leaves the shell in DIR when it succeeds; `pushd`, `popd` and `source` somewhere unknown. */
function directoryFlow(command: SimpleCommand, cwd: CwdSet, moves: boolean): CwdFlow {
  const name = commandName(command.argv[0]);
  if (moves) return { ok: unionCwds(cwd, UNKNOWN_CWD), fail: unionCwds(cwd, UNKNOWN_CWD) };
  if (name !== "cd") return stays(cwd);
  const operands = command.argv.slice(1).filter((w) => !(w.kind === "literal" && /^(-[LPe@]+|--)$/.test(w.value)));
  const target = operands[0];
  const known = target !== undefined && target.kind === "literal" && target.value !== "-" && !target.value.startsWith("~");
  return { ok: enterDirectory(command.cwd, known ? target.value : null), fail: cwd };
}

function nestedScript(state: AnalysisState, text: string, cwd: CwdSet): CwdFlow {
  if (state.scriptDepth >= MAX_SCRIPT_DEPTH) {
    state.result.blockers.push("scripts nest too deeply (`bash -c` / `eval` inside each other) to analyse");
    return stays(cwd);
  }
  state.scriptDepth++;
  try {
    return state.walkScript(text, state, cwd);
  } finally {
    state.scriptDepth--;
  }
}

function isKnown(word: ShellWord | undefined): boolean {
  const name = commandName(word);
  return name === null || INERT_COMMANDS.has(name) || isFileCommand(word) || isWrapper(name) || name === "git";
}

/**
 * For a program the analysis does not know: every tail of its words from a plain word on, and
 * the commands of every argument that reads as a command line, as layers deny patterns see.
 */
function addHiddenLayers(state: AnalysisState, command: SimpleCommand): void {
  const argv = command.argv;
  if (argv.length < 2 || isKnown(argv[0])) return;
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.kind === "literal" && word.value !== "" && !word.value.startsWith("-")) command.layers.push(argv.slice(i));
    if (word.kind === "literal" && /\s/.test(word.value.trim()) && state.scriptDepth < MAX_SCRIPT_DEPTH) {
      // `--exec=rm x`, `ProxyCommand=rm x`: the value after `=` may be the command line.
      // `vim -c '!rm x'`, `:!cmd`: editors and pagers run what follows a `!`.
      const texts = [word.value, ...(word.value.includes("=") ? [word.value.slice(word.value.indexOf("=") + 1)] : [])].map((t) => t.replace(/^[\s:!]+/, ""));
      for (const text of texts) for (const layer of hiddenCommands(state, text, command.cwd)) command.layers.push(layer);
    }
  }
}

/** The command layers of `text` read as a script, without recording them (a scratch analysis). */
function hiddenCommands(state: AnalysisState, text: string, cwd: CwdSet): ShellWord[][] {
  const scratch: AnalysisState = {
    ...state,
    result: { source: text, syntaxError: null, commands: [], files: [], constructs: [], blockers: [], tainted: [], loopChoices: [] },
    tainted: new Set(), loopWords: new Map(), otherwiseSet: new Set(), pending: [], widen: [], integers: new Map(), scriptDepth: state.scriptDepth + 1,
  };
  state.walkScript(text, scratch, cwd);
  if (scratch.result.syntaxError !== null) return [];
  return scratch.result.commands.flatMap((c) => c.layers);
}
