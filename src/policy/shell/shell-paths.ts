/**
 * Where the paths a shell command names really are. A redirection target, a file operand or an
 * argument is resolved against every directory its command may run in, then — when the file
 * system is at hand — through symlinks one component at a time, as the kernel does (so
 * `link/../x` goes where `link` points, not where the text suggests). The outcome is a
 * workspace-relative path, "outside", a harmless device, a network socket, or "unknown" (a
 * relative path after a `cd` that cannot be known). Folders read whole are walked
 * (shell-trees.ts); commands named by a path are resolved to the program they are.
 */
import { realpath } from "node:fs/promises";
import { glob } from "tinyglobby";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { expandBraces } from "../match/glob-overlap.js";
import { type CwdSet, cwdKey } from "./shell-cwd.js";
import type { ShellAnalysis, ShellFileAccess } from "./shell-model.js";
import { type Realpath, type TreeFacts, type TreeInterest, memoizedRealpath, walkPath, walkTree } from "./shell-trees.js";
import type { ShellWord } from "./grammar/shell-words.js";

export type { TreeFacts, TreeInterest } from "./shell-trees.js";

export type PathOutcome =
  | { kind: "inside"; path: string }
  | { kind: "outside"; path: string }
  | { kind: "device" }
  | { kind: "network"; path: string }
  | { kind: "unknown" };

/** A shell analysis with the paths it names resolved; what `decide` needs for a shell call. */
export interface ShellFacts {
  analysis: ShellAnalysis;
  /** Outcomes of each literal path text, one per directory it may be relative to; see `pathOutcomes`. */
  paths: ReadonlyMap<string, readonly PathOutcome[]>;
  /** What folders read whole hold, when the file system was walked; by `treeKey`. */
  trees: ReadonlyMap<string, TreeFacts>;
  /** Canonical paths of programs named by a path (`./g` → `/usr/bin/git`), by the text. */
  programs: ReadonlyMap<string, string>;
}

const DEVICES = /^\/dev\/(null|zero|full|random|urandom|stdin|stdout|stderr|tty|fd\/\d+)$/;
const NETWORK = /^\/dev\/(tcp|udp)\//;

/** The key of a path text resolved from a set of directories. */
export function pathKey(text: string, cwd: CwdSet): string {
  return `${cwdKey(cwd)}\n${text}`;
}

/**
 * The key of what a folder taken whole holds: by its path and how it is taken, since the same
 * folder read without links (`grep -r`) and through them (`grep -R`) holds different things.
 */
export function treeKey(file: Pick<ShellFileAccess, "target" | "cwd" | "tree">): string {
  return `${pathKey(file.target.value, file.cwd)}\n${file.tree ?? ""}`;
}

/** The outcomes of `text` resolved from `cwd`; empty when it was not resolved. */
export function pathOutcomes(facts: ShellFacts, text: string, cwd: CwdSet): readonly PathOutcome[] {
  return facts.paths.get(pathKey(text, cwd)) ?? [];
}

/**
 * The literal texts of a command that may name paths: its operands, and the values of
 * `--option=value` words (`git diff --output=FILE`). Best effort: what a program does with
 * its arguments is its own business, so these feed deny rules and rules with `paths`.
 */
export function argumentPathTexts(argv: readonly ShellWord[]): string[] {
  const texts: string[] = [];
  for (const word of argv.slice(1)) {
    const located = locatedText(word);
    if (located !== null) texts.push(located);
    if (word.kind === "glob") texts.push(...globFolders(word.value));
    if (word.kind !== "literal" || word.value === "") continue;
    if (!word.value.startsWith("-")) texts.push(word.value);
    else if (word.value.includes("=")) texts.push(word.value.slice(word.value.indexOf("=") + 1));
  }
  return texts.filter((t) => t !== "");
}

/** The words `$NAME` may be, when NAME is only ever set by `for` loops; null for any other word. */
export function loopChoices(analysis: ShellAnalysis, word: ShellWord): ShellWord[] | null {
  if (word.kind !== "expansion") return null;
  const match = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(word.value);
  return match === null ? null : (analysis.loopChoices.find((c) => c.name === match[1])?.words ?? null);
}

const LOCATED = /^\$(\{(PWD|HOME)\}|PWD|HOME)(\/[^$`]*)?$/;

/**
 * The path a word naming a place by the shell's own variables stands for: `"$PWD/.env"` is
 * `./.env` where the command runs, `$HOME/x` is `~/x`; null for any other word.
 */
export function locatedText(word: ShellWord): string | null {
  if (word.kind !== "expansion") return null;
  const match = LOCATED.exec(word.value);
  if (match === null) return null;
  return `${(match[2] ?? match[1]) === "PWD" ? "." : "~"}${match[3] ?? ""}`;
}

/**
 * The folder a glob word can only expand inside: its text up to the last `/` before the first
 * glob character (`src/*.ts` → `src`, `*.md` → `.`, `/etc/*` → `/etc`).
 */
export function globFolder(glob: string): string {
  const first = glob.search(/[*?[{]/);
  const head = first === -1 ? glob : glob.slice(0, first);
  const slash = head.lastIndexOf("/");
  if (slash === -1) return ".";
  return slash === 0 ? "/" : head.slice(0, slash);
}

/** The folders of each brace alternative of a glob word (`{src,/etc}/*` → `src`, `/etc`), and the alternatives that are plain paths. */
export function globFolders(glob: string): string[] {
  const alternatives = expandBraces(glob) ?? [glob];
  return [...new Set([...alternatives.map(globFolder), ...alternatives.filter((a) => !hasWildcard(a))])];
}

/** True when the text has an unescaped `*`, `?` or `[`. */
export function hasWildcard(text: string): boolean {
  return /[*?[]/.test(text);
}

/** The key under which the on-disk matches of a glob alternative are kept. */
export function globKey(alternative: string, cwd: CwdSet): string {
  return pathKey(`\u0000glob:${alternative}`, cwd);
}

interface PathText {
  text: string;
  cwd: CwdSet;
}

/** The literal texts worth resolving, each with the directories it is relative to. */
function pathTexts(analysis: ShellAnalysis): PathText[] {
  const texts: PathText[] = [];
  const add = (word: ShellWord, cwd: CwdSet): void => {
    const located = locatedText(word);
    if (located !== null) texts.push({ text: located, cwd });
    if (word.kind === "literal") texts.push({ text: word.value, cwd });
    if (word.kind === "glob") for (const text of globFolders(word.value)) texts.push({ text, cwd });
  };
  for (const file of analysis.files) {
    add(file.target, file.cwd);
    for (const choice of loopChoices(analysis, file.target) ?? []) add(choice, file.cwd);
  }
  for (const command of analysis.commands) {
    texts.push({ text: ".", cwd: command.cwd });
    for (const text of argumentPathTexts(command.argv)) texts.push({ text, cwd: command.cwd });
    const name = command.argv[0];
    if (name?.kind === "literal" && name.value.includes("/")) texts.push({ text: name.value, cwd: command.cwd });
  }
  return texts;
}

function classify(workspace: string, absolute: string): PathOutcome {
  const rel = relative(workspace, absolute);
  if (rel === "") return { kind: "inside", path: "." };
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return { kind: "outside", path: absolute };
  return { kind: "inside", path: rel.split(sep).join("/") };
}

function special(text: string): PathOutcome | null {
  if (DEVICES.test(text)) return { kind: "device" };
  if (NETWORK.test(text)) return { kind: "network", path: text };
  if (text.startsWith("~")) return { kind: "outside", path: text };
  return null;
}

async function outcomesOf(workspace: string, { text, cwd }: PathText, real: Realpath | null): Promise<PathOutcome[]> {
  const fixed = special(text);
  if (fixed !== null) return [fixed];
  const bases = isAbsolute(text) ? ["/"] : await Promise.all(cwd.dirs.map((dir) => walkPath(workspace, dir, real)));
  const outcomes: PathOutcome[] = [];
  for (const base of bases) outcomes.push(classify(workspace, await walkPath(base, text, real)));
  if (cwd.unknown && !isAbsolute(text)) outcomes.push({ kind: "unknown" });
  return outcomes;
}

export interface ResolveOptions {
  /**
   * What the deciding policy denies, so walks of folders read whole skip what cannot matter and
   * stop at the first denied path: the facts are then fit for deciding under that policy only.
   */
  interest?: TreeInterest;
}

/** Resolves through the file system under `workspace` (its canonical root): symlinks are followed, folders read whole are walked. */
export async function resolveShellPaths(analysis: ShellAnalysis, workspace: string, options: ResolveOptions = {}): Promise<ShellFacts> {
  const real = memoizedRealpath();
  const paths = new Map<string, PathOutcome[]>();
  for (const entry of pathTexts(analysis)) {
    const key = pathKey(entry.text, entry.cwd);
    if (!paths.has(key)) paths.set(key, await outcomesOf(workspace, entry, real));
  }
  await expandGlobs(analysis, workspace, real, paths);
  const trees = new Map<string, TreeFacts>();
  const budget = { entries: MAX_TREE_ENTRIES };
  for (const file of analysis.files) {
    if (file.tree === null || file.tree === "incoming" || (file.tree === "names" && file.access === "read") || file.target.kind !== "literal") continue;
    const key = treeKey(file);
    if (trees.has(key)) continue;
    const inside = (paths.get(pathKey(file.target.value, file.cwd)) ?? []).flatMap((o) => (o.kind === "inside" ? [o.path] : []));
    const follow = file.tree === "follow" || file.tree === "entries";
    trees.set(key, await walkTree(workspace, inside, follow, budget, options.interest, file.tree === "entries"));
  }
  const programs = new Map<string, string>();
  for (const command of analysis.commands) {
    const name = command.argv[0];
    if (name?.kind !== "literal" || !name.value.includes("/") || programs.has(name.value)) continue;
    const found = await realpath(resolve(workspace, command.cwd.dirs[0] ?? ".", name.value)).catch(() => null);
    if (found !== null) programs.set(name.value, found);
  }
  return { analysis, paths, trees, programs };
}

const MAX_GLOB_MATCHES = 2_000;
/** Entries walked in folders read whole, per decision; past it a folder "could hold anything". */
const MAX_TREE_ENTRIES = 20_000;

/**
 * Glob words expanded on disk, as bash would (without globstar `**` is `*`), every match
 * resolved through its links: `cat src/e*` reads what `src/envlink` points to.
 */
async function expandGlobs(analysis: ShellAnalysis, workspace: string, real: Realpath, paths: Map<string, PathOutcome[]>): Promise<void> {
  const words = [
    ...analysis.files.flatMap((f) => [f.target, ...(loopChoices(analysis, f.target) ?? [])].map((word) => ({ word, cwd: f.cwd }))),
    ...analysis.commands.flatMap((c) => c.argv.slice(1).map((word) => ({ word, cwd: c.cwd }))),
  ];
  for (const { word, cwd } of words) {
    if (word.kind !== "glob") continue;
    for (const alternative of expandBraces(word.value) ?? []) {
      const key = globKey(alternative, cwd);
      if (!hasWildcard(alternative) || paths.has(key)) continue;
      const outcomes: PathOutcome[] = [];
      for (const dir of cwd.dirs) {
        const base = await walkPath(workspace, dir, real);
        const found = await glob(alternative.replaceAll("**", "*"), { cwd: base, dot: true, onlyFiles: false, absolute: true, expandDirectories: false })
          .catch(() => [] as string[]);
        for (const match of found.slice(0, MAX_GLOB_MATCHES)) outcomes.push(classify(workspace, (await real(match)) ?? match));
      }
      paths.set(key, outcomes);
    }
  }
}

/** Resolves by text alone, for a policy check without a workspace on disk. Never touches the file system. */
export function resolveShellPathsLexically(analysis: ShellAnalysis, workspace: string): ShellFacts {
  const paths = new Map<string, PathOutcome[]>();
  for (const { text, cwd } of pathTexts(analysis)) {
    const fixed = special(text);
    if (fixed !== null) {
      paths.set(pathKey(text, cwd), [fixed]);
      continue;
    }
    const bases = isAbsolute(text) ? ["/"] : cwd.dirs.map((dir) => (isAbsolute(dir) ? resolve(dir) : resolve(workspace, dir)));
    const outcomes: PathOutcome[] = bases.map((base) => classify(workspace, resolve(base, text)));
    if (cwd.unknown && !isAbsolute(text)) outcomes.push({ kind: "unknown" });
    paths.set(pathKey(text, cwd), outcomes);
  }
  return { analysis, paths, trees: new Map(), programs: new Map() };
}
