#!/usr/bin/env node
// Builds the `rhema` executable's bundle: src/cli/main.ts and everything it reaches → one
// CommonJS file, dist/bundle/rhema.cjs, that dist/src/cli/rhema.js runs with a V8 code cache
// (src/cli/code-cache.ts says why). Start-up was mostly loading ~500 modules; one file with its
// compiled code cached starts in about half the time.
//
// CommonJS, not ESM, because Node 20 can hand V8 a code cache only for a vm.Script. A vm.Script
// cannot run `import()` without an experimental flag, so the bundle must hold every module it
// loads: nothing but Node's own modules is external (the build fails otherwise), and `import()`
// is compiled to `require`.
// Dependencies stay in node_modules too (the library entry uses them), and files resolved
// through `require` (the bash grammar's .wasm) are found from the bundle's folder as from
// dist/src; web-tree-sitter's own .wasm is copied beside the bundle.
import { copyFile, readFile, rm } from "node:fs/promises";
import { createRequire, isBuiltin } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const requireFromRoot = createRequire(join(root, "package.json"));
const outFlag = process.argv.indexOf("--outfile");
const outfile = resolve(root, outFlag >= 0 ? process.argv[outFlag + 1] : "dist/bundle/rhema.cjs");

// vega-canvas's Node build top-level-awaits `import("canvas")`, which CommonJS cannot hold.
// rhema renders charts to SVG without the optional `canvas` package, where that build returns
// null just as its browser build does here (no `document`): the same charts.
const vegaCanvasWithoutCanvas = {
  name: "vega-canvas-without-canvas",
  setup(b) {
    b.onResolve({ filter: /^vega-canvas$/ }, () => ({ path: join(root, "node_modules/vega-canvas/build/vega-canvas.browser.js") }));
  },
};

// web-tree-sitter declares `var require` in the function that also runs `await import("module")`;
// once that import is a require() call, it would call the not-yet-set var. Imported at the top.
const TREE_SITTER_IMPORT = 'const { createRequire } = await import("module");';
const treeSitterStaticImport = {
  name: "web-tree-sitter-static-import",
  setup(b) {
    b.onLoad({ filter: /web-tree-sitter[\\/]web-tree-sitter\.js$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      if (!source.includes(TREE_SITTER_IMPORT)) throw new Error(`${args.path}: expected ${TREE_SITTER_IMPORT} to rewrite; update scripts/build-cli.mjs`);
      return { contents: `import { createRequire } from "node:module";\n${source.replace(TREE_SITTER_IMPORT, "")}`, loader: "js" };
    });
  },
};

await rm(outfile, { force: true });
const result = await build({
  entryPoints: [join(root, "src/cli/bundle-entry.ts")],
  outfile,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  // Whitespace and syntax only: names stay, so a stack trace (RHEMA_DEBUG=1) still reads.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "linked",
  charset: "ascii", // the executable reads the bundle as Latin-1 (src/cli/code-cache.ts)
  // ESM modules read their own location; in the bundle that is the bundle's.
  define: { "import.meta.url": "__rhemaBundleUrl" },
  banner: { js: 'const __rhemaBundleUrl = require("node:url").pathToFileURL(__filename).href;' },
  supported: { "dynamic-import": false },
  plugins: [vegaCanvasWithoutCanvas, treeSitterStaticImport],
  metafile: true,
  logLevel: "warning",
});

const external = Object.values(result.metafile.outputs)
  .flatMap((output) => output.imports)
  .filter((entry) => entry.external && !isBuiltin(entry.path))
  .map((entry) => entry.path);
if (external.length > 0) {
  await rm(outfile, { force: true });
  throw new Error(`build-cli: the bundle would load ${[...new Set(external)].join(", ")} from outside it; bundle them`);
}
const text = await readFile(outfile);
if (text.some((byte) => byte > 0x7f)) throw new Error(`build-cli: ${outfile} is not ASCII; the executable reads it as Latin-1`);
// web-tree-sitter finds its runtime's .wasm beside the module that loads it: here, the bundle.
await copyFile(requireFromRoot.resolve("web-tree-sitter/web-tree-sitter.wasm"), join(dirname(outfile), "web-tree-sitter.wasm"));
console.log(`build-cli: wrote ${relative(root, outfile)} (${(text.length / 1e6).toFixed(1)} MB)`);
