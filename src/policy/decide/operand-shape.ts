/**
 * What paths a shell word could stand for, as deny rules and the workspace boundary must see it:
 * a literal is its resolved path; a glob or brace word (`.e*`, `{.x,.env}`, `src/*`) is a glob
 * under the folder it expands in; a word the command line chose at run time (a substitution, a
 * loop variable, xargs input) could be any path; a plain environment variable (`"$FILE"`) is the
 * run's own setting and is not judged as a path.
 */
import { couldHoldMatch, expandBraces, globsOverlap } from "../match/glob-overlap.js";
import type { CwdSet } from "../shell/shell-cwd.js";
import {
  type PathOutcome, type ShellFacts, globFolder, globKey, hasWildcard, locatedText, loopChoices, pathOutcomes,
} from "../shell/shell-paths.js";
import { ALWAYS_TAINTED } from "../shell/commands/shell-programs.js";
import { FIND_MATCH, type ShellWord } from "../shell/grammar/shell-words.js";

export type OperandShape =
  | { kind: "path"; outcomes: readonly PathOutcome[] }
  | { kind: "glob"; alternatives: GlobAlternative[] }
  | { kind: "anything"; why: string }
  | { kind: "opaque" }
  /** One of several: a `for` loop's variable is one of its words. */
  | { kind: "oneOf"; shapes: OperandShape[] };

/** One brace alternative of a glob word: the folder it expands in, the rest of the glob, and what it matched on disk. */
interface GlobAlternative {
  folder: readonly PathOutcome[];
  rest: string;
  /** Paths it matched on disk (resolved), or the plain path a brace alternative without wildcards is. */
  matches: readonly PathOutcome[];
  /** True when `matches` is all it can be: expanded on disk, or a plain path. */
  exact: boolean;
}

/** The paths `word`, relative to `cwd`, could be. */
export function operandShape(facts: ShellFacts, word: ShellWord, cwd: CwdSet): OperandShape {
  if (word.kind === "literal") return { kind: "path", outcomes: pathOutcomes(facts, word.value, cwd) };
  const located = locatedText(word);
  if (located !== null) return { kind: "path", outcomes: pathOutcomes(facts, located, cwd) };
  const choices = loopChoices(facts.analysis, word);
  if (choices !== null) return { kind: "oneOf", shapes: choices.map((choice) => operandShape(facts, choice, cwd)) };
  if (word.kind === "glob") {
    const alternatives = (expandBraces(word.value) ?? [word.value]).map((alt): GlobAlternative => {
      if (!hasWildcard(alt)) return { folder: [], rest: "", matches: pathOutcomes(facts, alt, cwd), exact: true };
      const folder = globFolder(alt);
      const rest = folder === "." && !alt.startsWith("./") ? alt : alt.slice(folder === "/" ? 1 : folder.length + 1);
      const expanded = facts.paths.get(globKey(alt, cwd));
      return { folder: pathOutcomes(facts, folder, cwd), rest, matches: expanded ?? [], exact: expanded !== undefined };
    });
    return { kind: "glob", alternatives };
  }
  if (word.kind === "expansion" && word.vars.length > 0 && word.vars.every((v) => v === FIND_MATCH)) return { kind: "opaque" };
  // `<(cmd)` is a pipe from a command judged on its own, not a path.
  if (word.kind === "substitution" && /^[<>]\(/.test(word.raw)) return { kind: "opaque" };
  const tainted = new Set([...facts.analysis.tainted, ...ALWAYS_TAINTED]);
  if (word.kind === "expansion" && !word.vars.some((v) => tainted.has(v))) return { kind: "opaque" };
  return { kind: "anything", why: `\`${word.raw}\` is only known at run time` };
}

/** A workspace path the shape could be that `match` takes (with `globs`, the rule's globs), or null. */
export function shapeMatch(shape: OperandShape, match: (path: string) => boolean, globs: readonly string[]): string | null {
  switch (shape.kind) {
    case "path":
      return shape.outcomes.flatMap((o) => (o.kind === "inside" && match(o.path) ? [o.path] : []))[0] ?? null;
    case "glob":
      for (const { folder, rest, matches, exact } of shape.alternatives) {
        const matched = matches.find((o) => o.kind === "inside" && match(o.path));
        if (matched !== undefined && matched.kind === "inside") return matched.path;
        // Expanded on disk, a glob is what it matched; by text, whatever it could match.
        if (exact) continue;
        for (const outcome of folder) {
          if (outcome.kind !== "inside") continue;
          const candidate = outcome.path === "." ? rest : `${outcome.path}/${rest}`;
          if (rest.split("/").includes("..") || globs.some((g) => globsOverlap(candidate, g))) return candidate;
        }
      }
      return null;
    case "anything":
      return shape.why;
    case "opaque":
      return null;
    case "oneOf":
      return shape.shapes.map((s) => shapeMatch(s, match, globs)).find((hit) => hit !== null) ?? null;
  }
}

/** A workspace folder, read or written whole, that could hold a path one of `globs` matches. */
export function folderCouldHold(folder: string, globs: readonly string[]): boolean {
  return globs.some((g) => couldHoldMatch(folder, g));
}

/** Where the shape leaves the workspace: an outside path, a socket, or a run-time path; null when it stays inside. */
export function shapeOutside(shape: OperandShape): string | null {
  switch (shape.kind) {
    case "path":
      return shape.outcomes.flatMap((o) => (o.kind === "outside" || o.kind === "network" ? [o.path] : []))[0] ?? null;
    case "glob":
      for (const a of shape.alternatives) {
        const out = [...a.folder, ...a.matches].find((o) => o.kind === "outside" || o.kind === "network");
        if (out !== undefined && (out.kind === "outside" || out.kind === "network")) return out.path;
        if (!a.exact && a.rest.split("/").includes("..")) return a.rest;
      }
      return null;
    case "anything":
      return shape.why;
    case "opaque":
      return null;
    case "oneOf":
      return shape.shapes.map(shapeOutside).find((out) => out !== null) ?? null;
  }
}
