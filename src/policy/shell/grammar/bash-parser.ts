/**
 * The bash grammar: tree-sitter-bash through web-tree-sitter, loaded offline from the .wasm the
 * package ships. Loading is async and costs a few tens of milliseconds, so it happens once,
 * lazily, and the parser is cached for the life of the process. The cache is the one piece of
 * module state in src/policy: it holds an immutable grammar, never anything about a run.
 *
 * Why the grammar is compiled with V8's baseline compiler only (Liftoff): by default V8 tiers a
 * hot WebAssembly function up to its optimizing compiler, and tree-sitter-bash's generated lexer
 * is one enormous function — optimizing it took ~1 s of CPU and blocked the main thread right
 * after the first parse, which is where the first shell call of every process lost 1–5 s on a
 * loaded machine. Commands are short; baseline code parses them in well under a millisecond.
 * The flag is read when a module is compiled, so it is set for these two modules and restored
 * at once: other WebAssembly in the process is compiled as before.
 *
 * The load ends with one warm-up parse: the first parse of a process pays ~15–40 ms of one-time
 * set-up inside the grammar, which `preloadBashParser` (the runner, as soon as it knows some
 * task's policy may let a command run) moves off the first shell call along with the compile —
 * the compile runs on V8's background threads while the run copies workspaces and sends its
 * first model request.
 */
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import { Language, Parser, type Tree } from "web-tree-sitter";

/** Parses bash source into a syntax tree. The caller must `delete()` the tree when done. */
export interface BashParser {
  parse(source: string): Tree;
}

let loading: Promise<BashParser> | null = null;
let loaded = false;

/** Where the shared parser stands: never asked for, being compiled, or ready. */
export type BashParserState = "idle" | "loading" | "ready";

export function bashParserState(): BashParserState {
  return loaded ? "ready" : loading === null ? "idle" : "loading";
}

/** A command that walks the common node kinds once (list, pipeline, redirect, expansion, string). */
const WARM_UP_COMMAND = 'cd src && cat "$HOME/a b" | grep -v x > out.txt 2>&1; echo $(ls) done';

/** The shared bash parser, loaded on first use. A failed load is retried on the next call. */
export function loadBashParser(): Promise<BashParser> {
  loading ??= createBashParser().then(
    (parser) => {
      loaded = true;
      return parser;
    },
    (err: unknown) => {
      loading = null;
      throw err;
    },
  );
  return loading;
}

/**
 * Starts loading the shared parser without waiting for it, so the first shell decision finds
 * it ready. Never throws: a failed load is reported (and retried) by the call that needs it.
 */
export function preloadBashParser(): void {
  loadBashParser().catch(() => {});
}

async function createBashParser(): Promise<BashParser> {
  const require = createRequire(import.meta.url);
  const language = await withBaselineWasm(async () => {
    await Parser.init();
    return Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
  });
  const parser = new Parser();
  parser.setLanguage(language);
  parser.parse(WARM_UP_COMMAND)?.delete();
  return {
    parse(source: string): Tree {
      // Parsing is synchronous, so one parser serves every caller without interleaving.
      const tree = parser.parse(source);
      if (tree === null) throw new Error("tree-sitter returned no tree for a shell command");
      return tree;
    },
  };
}

/** Runs `compile` with WebAssembly compiled by Liftoff alone (see the header), then restores V8's default. */
async function withBaselineWasm<T>(compile: () => Promise<T>): Promise<T> {
  setFlagsFromString("--liftoff-only");
  try {
    return await compile();
  } finally {
    setFlagsFromString("--no-liftoff-only");
  }
}
