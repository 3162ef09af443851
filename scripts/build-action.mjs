#!/usr/bin/env node
// Builds the GitHub Action's committed bundle: src/action/main.ts → action-dist/index.js (ESM,
// every dependency inside, a createRequire banner for the CommonJS ones) and, beside it, a chunk
// for each part imported only when needed (a provider's SDK, the artifact client: `import()` in
// the sources), so the step loads only what its run uses; plus the two .wasm files the bash
// grammar loads at runtime. GitHub runs the
// action without `npm install`, so nothing may be left in node_modules. `--outdir DIR` builds
// elsewhere (the test that holds the committed bundle equal to a fresh build).
import { copyFile, mkdir, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outFlag = process.argv.indexOf("--outdir");
const outdir = resolve(root, outFlag >= 0 ? process.argv[outFlag + 1] : "action-dist");
const require = createRequire(join(root, "package.json"));

/** The grammar is found through node_modules in the library; in the bundle it sits beside index.js. */
const GRAMMAR_LOOKUP = 'require.resolve("tree-sitter-bash/tree-sitter-bash.wasm")';
const bundledGrammar = {
  name: "bundled-bash-grammar",
  setup(b) {
    b.onLoad({ filter: /src[\\/]policy[\\/]shell[\\/]grammar[\\/]bash-parser\.ts$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      if (!source.includes(GRAMMAR_LOOKUP)) throw new Error(`${args.path}: expected ${GRAMMAR_LOOKUP} to rewrite for the bundle; update scripts/build-action.mjs`);
      const contents = source.replace(GRAMMAR_LOOKUP, 'fileURLToPath(new URL("./tree-sitter-bash.wasm", import.meta.url))')
        .replace('import { createRequire } from "node:module";', 'import { fileURLToPath } from "node:url";')
        .replace(/^\s*const require = createRequire\(import\.meta\.url\);\n/m, "");
      return { contents, loader: "ts" };
    });
  },
};

/**
 * The JUnit builder is required lazily through `createRequire(import.meta.url)`, which esbuild
 * cannot follow: left as is, the bundle looks for it in a node_modules that GitHub's checkout of
 * the action does not have. A plain `require()` is bundled (and still runs at the first report).
 */
const JUNIT_LOOKUP = 'createRequire(import.meta.url)("junit-report-builder")';
const bundledJunitBuilder = {
  name: "bundled-junit-builder",
  setup(b) {
    b.onLoad({ filter: /src[\\/]runner[\\/]reports[\\/]junit-report\.ts$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      if (!source.includes(JUNIT_LOOKUP)) throw new Error(`${args.path}: expected ${JUNIT_LOOKUP} to rewrite for the bundle; update scripts/build-action.mjs`);
      return { contents: source.replace(JUNIT_LOOKUP, 'require("junit-report-builder")'), loader: "ts" };
    });
  },
};

await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
await build({
  entryPoints: [join(root, "src/action/main.ts")],
  outdir,
  entryNames: "index",
  // Flat beside index.js: what `import()` loads lazily (the SDKs) is a chunk of its own.
  splitting: true,
  chunkNames: "[name]-[hash]",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  minify: true,
  legalComments: "linked",
  // The binary this package points at is not in the bundle: the tools use the runner's `rg`, else search in JavaScript.
  external: ["@vscode/ripgrep"],
  // CommonJS dependencies call require() and read __filename/__dirname, which ESM lacks.
  banner: {
    js: [
      'import { createRequire as __rhemaCreateRequire } from "node:module";',
      'import { fileURLToPath as __rhemaFileURLToPath } from "node:url";',
      'import { dirname as __rhemaDirname } from "node:path";',
      "const require = __rhemaCreateRequire(import.meta.url);",
      "const __filename = __rhemaFileURLToPath(import.meta.url);",
      "const __dirname = __rhemaDirname(__filename);",
    ].join(" "),
  },
  plugins: [bundledGrammar, bundledJunitBuilder],
  logLevel: "warning",
});
await copyFile(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"), join(outdir, "tree-sitter-bash.wasm"));
await copyFile(require.resolve("web-tree-sitter/web-tree-sitter.wasm"), join(outdir, "web-tree-sitter.wasm"));
console.log(`build-action: wrote ${outdir}`);
