/**
 * The bash grammar: tree-sitter-bash through web-tree-sitter, loaded offline from the .wasm the
 * package ships. Loading is async and costs a few milliseconds, so it happens once, lazily, and
 * the parser is cached for the life of the process. The cache is the one piece of module state
 * in src/policy: it holds an immutable grammar, never anything about a run.
 */
import { createRequire } from "node:module";
import { Language, Parser, type Tree } from "web-tree-sitter";

/** Parses bash source into a syntax tree. The caller must `delete()` the tree when done. */
export interface BashParser {
  parse(source: string): Tree;
}

let loading: Promise<BashParser> | null = null;

/** The shared bash parser, loaded on first use. A failed load is retried on the next call. */
export function loadBashParser(): Promise<BashParser> {
  loading ??= createBashParser().catch((err: unknown) => {
    loading = null;
    throw err;
  });
  return loading;
}

async function createBashParser(): Promise<BashParser> {
  const require = createRequire(import.meta.url);
  await Parser.init();
  const language = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
  const parser = new Parser();
  parser.setLanguage(language);
  return {
    parse(source: string): Tree {
      // Parsing is synchronous, so one parser serves every caller without interleaving.
      const tree = parser.parse(source);
      if (tree === null) throw new Error("tree-sitter returned no tree for a shell command");
      return tree;
    },
  };
}
