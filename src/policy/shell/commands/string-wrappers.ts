/**
 * Wrappers that take the command they run as one string, or start a shell reading its input:
 * `su [-c]`, `runuser`, `script -c`, `sg`, `watch`, GNU `parallel`. A literal string is a
 * script to judge; anything else hides what runs.
 */
import { hasOption, optionValues, parseOptions } from "./command-options.js";
import { SHELLS } from "./shell-programs.js";
import { type ShellWord, literalWord } from "../grammar/shell-words.js";
import { type WrapperStep, cannot, scriptStep } from "./wrapper-step.js";

/** `su [opts] [-] [USER [ARGS…]]` and `runuser`: `-c CMD` anywhere is a script; without it a shell reads its input. */
export function readSu(words: ShellWord[], name: string): WrapperStep {
  const parsed = parseOptions(words, {
    flags: "lmpfPT", withValue: "cgGsuwC",
    longFlags: ["login", "preserve-environment", "pty", "no-pty", "fast"],
    longWithValue: ["command", "session-command", "group", "supp-group", "shell", "user", "whitelist-environment"],
    stopAtOperand: false,
  }, 1);
  if (parsed.problem) return { next: null, guarded: true, blocker: cannot(name, parsed.problem) };
  const shell = optionValues(parsed, "s", "shell").at(-1);
  if (shell !== undefined && !SHELLS.has(shell.value.split("/").pop() ?? "")) {
    return { next: null, guarded: true, unjudgeable: `\`${name} -s ${shell.value}\` runs another program as the shell` };
  }
  const user = optionValues(parsed, "u", "user");
  const dashDash = words.findIndex((w, i) => i > 0 && w.value === "--");
  if (name === "runuser" && user.length > 0 && dashDash > 0) {
    const rest = words.slice(dashDash + 1);
    return { next: rest.length > 0 ? rest : null, guarded: true };
  }
  const command = optionValues(parsed, "c", "command", "session-command").at(-1);
  if (command !== undefined) return scriptStep(name, command.valueWord ?? literalWord(command.value), { next: null, guarded: true });
  return { next: null, guarded: true, unjudgeable: `\`${name}\` without \`-c\` starts a shell that reads its commands from its input` };
}

/** `script [opts] [FILE]`: `-c CMD` is a script, FILE (default `typescript`) is written; without `-c` a shell reads its input. */
export function readScript(words: ShellWord[], name: string): WrapperStep {
  const parsed = parseOptions(words, {
    flags: "aefqh", withValue: "cEBIOTmo", optionalValue: "t",
    longFlags: ["append", "return", "flush", "force", "quiet"],
    longWithValue: ["command", "echo", "log-io", "log-in", "log-out", "log-timing", "logging-format", "output-limit"],
    longOptionalValue: ["timing"],
    stopAtOperand: false,
  });
  if (parsed.problem) return { next: null, blocker: cannot(name, parsed.problem) };
  const logs = optionValues(parsed, "B", "I", "O", "T", "log-io", "log-in", "log-out", "log-timing").map((o) => o.valueWord ?? literalWord(o.value));
  const file = parsed.operands[0] ?? literalWord("typescript");
  const step: WrapperStep = { next: null, writes: [...logs, file] };
  const command = optionValues(parsed, "c", "command").at(-1);
  if (command === undefined) return { ...step, unjudgeable: "`script` without `-c` starts a shell that reads its commands from its input" };
  return scriptStep(name, command.valueWord ?? literalWord(command.value), step);
}

/** `sg GROUP [-c] CMD`: the command is one string run by a shell. */
export function readSg(words: ShellWord[], name: string): WrapperStep {
  let i = 1;
  if (words[i]?.value === "-") i++;
  if (words[i] === undefined) return { next: null, guarded: true };
  i++;
  if (words[i]?.value === "-c") i++;
  const command = words[i];
  if (command === undefined) return { next: null, guarded: true, unjudgeable: `\`${name}\` with no command starts a shell that reads its input` };
  if (words.length > i + 1) return { next: null, guarded: true, blocker: cannot(name, "it takes its command as one string") };
  return scriptStep(name, command, { next: null, guarded: true });
}

/** `watch [opts] CMD…`: the words are joined and run by `sh -c`, unless `-x` execs them. */
export function readWatch(words: ShellWord[], name: string): WrapperStep {
  const parsed = parseOptions(words, {
    flags: "bceghptwrCx", withValue: "nqs", optionalValue: "d",
    longFlags: ["beep", "color", "no-color", "errexit", "chgexit", "precise", "no-title", "no-wrap", "exec", "no-linewrap"],
    longWithValue: ["interval", "equexit", "shotsdir"], longOptionalValue: ["differences"],
  });
  if (parsed.problem) return { next: null, blocker: cannot(name, parsed.problem) };
  const rest = words.slice(parsed.next);
  if (rest.length === 0) return { next: null };
  if (hasOption(parsed, "x", "exec")) return { next: rest };
  if (rest.some((w) => w.kind !== "literal")) return { next: null, unjudgeable: `\`${name}\` runs a command line known only at run time` };
  return { next: [], script: rest.map((w) => w.value).join(" ") };
}

const PARALLEL_SPEC = {
  flags: "0kqvuXmgreEsS", withValue: "jnNPIdaL",
  longFlags: [
    "null", "keep-order", "quote", "verbose", "ungroup", "xargs", "group", "tag", "bar", "eta", "progress", "dry-run",
    "will-cite", "line-buffer", "lb", "pipe", "no-run-if-empty", "halt-on-error", "shuf", "files", "linebuffer", "citation",
  ],
  longWithValue: [
    "jobs", "max-args", "max-replace-args", "max-procs", "replace", "delimiter", "colsep", "halt", "timeout", "delay",
    "retries", "arg-file", "block", "tagstring", "load", "memfree", "nice",
  ],
};

/**
 * GNU `parallel [opts] CMD [ARGS] ::: …`: the command words (with `{}` and the `:::`
 * arguments filled in at run time) are run by a shell; with no command each input line is one.
 */
export function readParallel(words: ShellWord[], name: string): WrapperStep {
  const parsed = parseOptions(words, PARALLEL_SPEC);
  if (parsed.problem) return { next: null, blocker: cannot(name, parsed.problem) };
  const rest = words.slice(parsed.next);
  const end = rest.findIndex((w) => w.kind === "literal" && /^:::[:+]?$|^::::\+?$/.test(w.value));
  const command = end < 0 ? rest : rest.slice(0, end);
  if (command.length === 0) return { next: null, unjudgeable: `\`${name}\` with no command runs each input line as a command` };
  if (command.some((w) => w.kind !== "literal")) return { next: null, unjudgeable: `\`${name}\` runs a command line known only at run time` };
  const filled = command.map((w) => w.value.replace(/\{[^{}\s]*\}/g, '"$__rhema_runtime"'));
  const placeholder = filled.some((text, i) => text !== command[i]!.value);
  const text = filled.join(" ") + (placeholder ? "" : ' "$__rhema_runtime"');
  // `:::: FILE` and `-a FILE` take the arguments from files.
  const files = rest.slice(end < 0 ? rest.length : end).filter((_w, i, all) => i > 0 && /^::::\+?$/.test(all[i - 1]?.value ?? ""));
  const reads = [...optionValues(parsed, "a", "arg-file").map((o) => o.valueWord ?? literalWord(o.value)), ...files];
  return { next: [], script: text, reads };
}

