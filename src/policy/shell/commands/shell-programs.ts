/**
 * Small facts about programs the analysis needs in several places: which names are shells,
 * the commands `find … -exec CMD ;` runs, and the variables whose value is data the command
 * line chose itself rather than the environment the run was given.
 */
import { COMMAND_OUTPUT, FIND_MATCH, RUNTIME_VALUE, type ShellWord, runtimeWord } from "../grammar/shell-words.js";

export const SHELLS: ReadonlySet<string> = new Set(["bash", "sh", "dash", "zsh", "ksh", "ash", "mksh", "yash", "posh", "rbash"]);

/**
 * Variables whose value the command line itself supplies (positional parameters, what `read`,
 * `getopts`, `[[ =~ ]]` and `mapfile` leave, the directory `cd` chose, run-time words): always
 * treated as chosen text.
 */
export const ALWAYS_TAINTED: ReadonlySet<string> = new Set([
  RUNTIME_VALUE, FIND_MATCH, COMMAND_OUTPUT, "__rhema_runtime", "@", "*", "_", "REPLY", "BASH_REMATCH", "MAPFILE", "OPTARG", "PWD", "OLDPWD",
  "BASH_ARGV", "BASH_COMMAND", "COMP_WORDS", "READLINE_LINE", "1", "2", "3", "4", "5", "6", "7", "8", "9", "0",
]);

const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/** The commands `find … -exec CMD … ;` (or `+`) runs, with `{}` as a run-time word. */
export function findExecCommands(words: readonly ShellWord[]): { commands: ShellWord[][]; blocker: string | null } {
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
      body.push(part.kind === "literal" && part.value.includes("{}") ? runtimeWord(part.raw, FIND_MATCH) : part);
    }
    if (j >= words.length) return { commands, blocker: `cannot see through \`find\`: \`${word.value}\` has no terminating \`;\` or \`+\`` };
    if (body.length === 0) return { commands, blocker: `cannot see through \`find\`: \`${word.value}\` names no command` };
    commands.push(body);
    i = j;
  }
  return { commands, blocker: null };
}

/**
 * Commands known not to run their arguments as commands: shell builtins and simple utilities.
 * Beside the file commands (file-command-table.ts), wrappers and git, these are the programs
 * whose words deny rules do not search for a hidden command (`echo rm x` runs echo).
 */
export const INERT_COMMANDS: ReadonlySet<string> = new Set([
  "echo", "printf", "true", "false", "test", "[", ":", "pwd", "type", "which", "whereis", "help", "exit", "return", "shift",
  "set", "shopt", "umask", "ulimit", "kill", "wait", "jobs", "fg", "bg", "disown", "times", "sleep", "date", "id", "whoami",
  "hostname", "uname", "basename", "dirname", "seq", "yes", "expr", "printenv", "tput", "clear", "declare", "typeset",
  "local", "export", "readonly", "unset", "let", "read", "mapfile", "readarray", "getopts", "trap", "alias", "unalias",
  "hash", "enable", "complete", "compgen", "dirs", "popd", "break", "continue", "caller", "logout", "suspend", "tr",
  "nproc", "locale", "groups", "tty", "stty", "mktemp", "getconf", "arch", "env", "cal", "factor", "numfmt", "users", "who",
]);
