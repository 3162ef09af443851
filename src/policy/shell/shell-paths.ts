/**
 * Where the paths a shell command names really are. A redirection target, a `tee` file or an
 * argument is resolved against every directory the command may `cd` into, then — when the
 * file system is at hand — through symlinks one component at a time, as the kernel does (so
 * `link/../x` goes where `link` points, not where the text suggests). The outcome is a
 * workspace-relative path, "outside", a harmless device, or "unknown" (a relative path after a
 * `cd` that cannot be known).
 */
import { lstat, readlink, realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { ShellAnalysis } from "./shell-analysis.js";
import type { ShellWord } from "./shell-words.js";

export type PathOutcome =
  | { kind: "inside"; path: string }
  | { kind: "outside"; path: string }
  | { kind: "device" }
  | { kind: "unknown" };

/** A shell analysis with the paths it names resolved; what `decide` needs for a shell call. */
export interface ShellFacts {
  analysis: ShellAnalysis;
  /** Outcomes of each literal path text, one per directory the command may run in. */
  paths: ReadonlyMap<string, readonly PathOutcome[]>;
}

const DEVICES = /^\/dev\/(null|zero|stdin|stdout|stderr|tty|fd\/\d+)$/;

/**
 * The literal texts of a command that may name paths: its operands, and the values of
 * `--option=value` words (`git diff --output=FILE`). Best effort: what a program does with
 * its arguments is its own business, so these feed deny rules and rules with `paths`.
 */
export function argumentPathTexts(argv: readonly ShellWord[]): string[] {
  const texts: string[] = [];
  for (const word of argv.slice(1)) {
    if (word.kind === "glob") texts.push(globFolder(word.value));
    if (word.kind !== "literal" || word.value === "") continue;
    if (!word.value.startsWith("-")) texts.push(word.value);
    else if (word.value.includes("=")) texts.push(word.value.slice(word.value.indexOf("=") + 1));
  }
  return texts.filter((t) => t !== "");
}

/**
 * The folder a glob word can only expand inside: its text up to the last `/` before the first
 * glob character (`src/*.ts` → `src`, `*.md` → `.`, `/etc/*` → `/etc`).
 */
export function globFolder(glob: string): string {
  const first = glob.search(/[*?[]/);
  const head = first === -1 ? glob : glob.slice(0, first);
  const slash = head.lastIndexOf("/");
  if (slash === -1) return ".";
  return slash === 0 ? "/" : head.slice(0, slash);
}

/** The literal texts worth resolving: file targets and the path-like arguments of every command. */
export function pathTexts(analysis: ShellAnalysis): Set<string> {
  const texts = new Set<string>();
  for (const file of analysis.files) if (file.target.kind === "literal") texts.add(file.target.value);
  for (const command of analysis.commands) for (const text of argumentPathTexts(command.argv)) texts.add(text);
  return texts;
}

function classify(workspace: string, absolute: string): PathOutcome {
  const rel = relative(workspace, absolute);
  if (rel === "") return { kind: "inside", path: "." };
  if (rel.startsWith("..") || isAbsolute(rel)) return { kind: "outside", path: absolute };
  return { kind: "inside", path: rel.split(sep).join("/") };
}

type Realpath = (path: string) => Promise<string | null>;

/** Walks `text` from `base` component by component; `real` resolves symlinks (null: does not exist). */
async function walkPath(base: string, text: string, real: Realpath | null): Promise<string> {
  let current = isAbsolute(text) ? "/" : base;
  for (const part of text.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      current = resolve(current, "..");
      continue;
    }
    current = join(current, part);
    if (real) current = (await real(current)) ?? current;
  }
  return current;
}

async function resolveAll(analysis: ShellAnalysis, workspace: string, real: Realpath | null): Promise<ShellFacts> {
  const cwds: string[] = [];
  for (const cwd of analysis.cwds) cwds.push(await walkPath(workspace, cwd, real));
  const paths = new Map<string, PathOutcome[]>();
  for (const text of pathTexts(analysis)) {
    if (DEVICES.test(text)) {
      paths.set(text, [{ kind: "device" }]);
      continue;
    }
    if (text.startsWith("~")) {
      paths.set(text, [{ kind: "outside", path: text }]);
      continue;
    }
    const outcomes: PathOutcome[] = [];
    const bases = isAbsolute(text) ? ["/"] : cwds;
    for (const base of bases) outcomes.push(classify(workspace, await walkPath(base, text, real)));
    if (analysis.cwdUnknown && !isAbsolute(text)) outcomes.push({ kind: "unknown" });
    paths.set(text, outcomes);
  }
  return { analysis, paths };
}

/** Links followed for one dangling-link chain before giving up, as the kernel does (ELOOP). */
const MAX_LINK_HOPS = 40;

/**
 * The canonical path, or null when nothing exists there. A dangling symlink is followed through
 * its text: writing through it creates the file where it points, which may be outside.
 */
async function realpathOrNull(path: string, hops = 0): Promise<string | null> {
  try {
    return await realpath(path);
  } catch {
    const stat = await lstat(path).catch(() => null);
    if (stat === null || !stat.isSymbolicLink() || hops >= MAX_LINK_HOPS) return null;
    const target = await readlink(path).catch(() => null);
    if (target === null) return null;
    return walkPath(dirname(path), target, (next) => realpathOrNull(next, hops + 1));
  }
}

/** Resolves through the file system under `workspace` (its canonical root): symlinks are followed. */
export function resolveShellPaths(analysis: ShellAnalysis, workspace: string): Promise<ShellFacts> {
  // One decision's paths share prefixes (the workspace, src/, …): look each up once.
  const seen = new Map<string, Promise<string | null>>();
  const memoized: Realpath = (path) => {
    let found = seen.get(path);
    if (found === undefined) seen.set(path, (found = realpathOrNull(path)));
    return found;
  };
  return resolveAll(analysis, workspace, memoized);
}

/** Resolves by text alone, for a policy check without a workspace on disk. Never touches the file system. */
export function resolveShellPathsLexically(analysis: ShellAnalysis, workspace: string): ShellFacts {
  // With no realpath the walk never awaits anything that can fail; run it synchronously.
  const cwds = analysis.cwds.map((cwd) => (isAbsolute(cwd) ? resolve(cwd) : resolve(workspace, cwd)));
  const paths = new Map<string, PathOutcome[]>();
  for (const text of pathTexts(analysis)) {
    if (DEVICES.test(text)) paths.set(text, [{ kind: "device" }]);
    else if (text.startsWith("~")) paths.set(text, [{ kind: "outside", path: text }]);
    else {
      const bases = isAbsolute(text) ? ["/"] : cwds;
      const outcomes: PathOutcome[] = bases.map((base) => classify(workspace, resolve(base, text)));
      if (analysis.cwdUnknown && !isAbsolute(text)) outcomes.push({ kind: "unknown" });
      paths.set(text, outcomes);
    }
  }
  return { analysis, paths };
}
