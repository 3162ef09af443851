/**
 * Path flags that name nothing: `--out ""` (an unset CI variable, `--out "$OUT"`) used to mean
 * the working directory, and a `--restart` then wiped it. Every path a command takes — flags
 * and positional paths alike — is checked here before anything is read or written: an empty
 * (or all-blank) value is exit 2 naming the flag. Which flags are paths is declared once per
 * command, beside the yargs options in main.ts.
 */
import { RhemaError } from "../core/errors.js";

/** The path-valued flags (camel-cased as yargs gives them) and positionals of each command. */
export const PATH_FLAGS = {
  run: { flags: ["out", "policy", "junit", "stats", "summary", "pricing", "matrix", "quarantine", "calibration", "cassette"], positional: "paths" },
  validate: { flags: ["policy", "pricing", "matrix", "quarantine", "calibration"], positional: "paths" },
  "report merge": { flags: ["out"], positional: "dirs" },
  "report compare": { flags: ["out", "json", "chart"], positional: "dirs" },
  "report trend": { flags: ["out", "json", "proposeQuarantine"], positional: "dirs" },
  "report html": { flags: ["out"], positional: "dir" },
  "bench replay": { flags: ["pricing", "chart", "calibration"], positional: "inputs" },
  "bench calibrate": { flags: ["out"], positional: "inputs" },
  "policy check": { flags: ["policy", "workspace"], positional: null },
  "cassette show": { flags: [], positional: "file" },
  "cassette prune": { flags: ["runs"], positional: "dir" },
} as const satisfies Record<string, { flags: readonly string[]; positional: string | null }>;
export type PathCommand = keyof typeof PATH_FLAGS;

/** Why `value` names no path ("is empty", …), or null when it is a path to try. */
export function blankPathProblem(value: string): string | null {
  if (value.trim() === "") return value === "" ? "is empty" : "is only blanks";
  if (value.includes("\0")) return "holds a NUL byte";
  return null;
}

/** Throws a `usage` error (exit 2) for the first path flag or positional of `command` given a value that names nothing. */
export function checkPathFlags(command: PathCommand, args: Readonly<Record<string, unknown>>): void {
  const { flags, positional } = PATH_FLAGS[command];
  for (const flag of flags) {
    for (const value of values(args[flag])) {
      const problem = blankPathProblem(value);
      if (problem !== null) throw blankError(`--${dashed(flag)}`, value, problem);
    }
  }
  if (positional === null) return;
  for (const value of values(args[positional])) {
    const problem = blankPathProblem(value);
    if (problem !== null) throw blankError(`a path given to \`rhema ${command}\``, value, problem);
  }
}

function blankError(what: string, value: string, problem: string): RhemaError {
  return new RhemaError("usage", `Expected ${what} to name a path, got ${JSON.stringify(value)} (it ${problem}: is a variable unset?); nothing was read or written`);
}

/** A flag's values as strings (repeatable flags give arrays; numbers from yargs as text). */
function values(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.map(String);
  return [String(value)];
}

function dashed(flag: string): string {
  return flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
