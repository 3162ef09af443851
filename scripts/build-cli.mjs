#!/usr/bin/env node
// Builds the `rhema` executable's bundle: src/cli/main.ts and everything it reaches → CommonJS
// files in dist/bundle/ that dist/src/cli/rhema.js runs with a V8 code cache (src/cli/code-cache.ts
// says why): rhema.cjs, and in chunks/ the large packages only some runs load (the model
// providers' SDKs, the price table, the chart renderer, the OpenAI tokenizer's encodings), so
// that a run which does not use them neither reads nor compiles them (a cold start: ~0.7 → ~0.6 s to the first model request).
// Start-up was mostly loading ~500 modules; one file with its compiled code cached starts in
// about half the time.
//
// CommonJS, not ESM, because Node 20 can hand V8 a code cache only for a vm.Script. A vm.Script
// cannot run `import()` without an experimental flag, so `import()` is compiled to `require`
// and the files hold every module they load: nothing but Node's own modules and the chunks is
// external (the build fails otherwise). Dependencies stay in node_modules too (the library
// entry uses them), and files resolved through `require` (the bash grammar's .wasm) are found
// from the bundle's folder as from dist/src; web-tree-sitter's own .wasm is copied beside it.
// Every file is ASCII: the executable reads them as Latin-1.
import { copyFile, readFile, rm } from "node:fs/promises";
import { createRequire, isBuiltin } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const requireFromRoot = createRequire(join(root, "package.json"));
const outFlag = process.argv.indexOf("--outdir");
const outdir = resolve(root, outFlag >= 0 ? process.argv[outFlag + 1] : "dist/bundle");

/** Packages each bundled on their own, as chunks/<file>; the main bundle requires them when first used. */
const CHUNKS = {
  "@anthropic-ai/sdk": "anthropic-sdk.cjs",
  "openai": "openai-sdk.cjs",
  "@google/genai": "google-genai-sdk.cjs",
  // Anthropic on Bedrock and Vertex: each SDK with its own copy of the Anthropic SDK's core (the
  // adapters take the error classes from the client, anthropic.ts says why); the auth libraries
  // the adapters hand their credentials to (a profile's resolver, Google ADC) apart, shared with
  // the SDK's chunk (SHARED_CHUNKS).
  "@anthropic-ai/bedrock-sdk": "anthropic-bedrock-sdk.cjs",
  "@anthropic-ai/vertex-sdk": "anthropic-vertex-sdk.cjs",
  "@aws-sdk/credential-providers": "aws-credential-providers.cjs",
  "google-auth-library": "google-auth-library.cjs",
  "@pydantic/genai-prices": "genai-prices.cjs",
  "vega": "vega.cjs",
  "vega-lite": "vega-lite.cjs",
  "gpt-tokenizer/encoding/o200k_base": "tokenizer-o200k.cjs",
  "gpt-tokenizer/encoding/cl100k_base": "tokenizer-cl100k.cjs",
};

/**
 * Modules bundled together as one chunk (their exports merged), for a package whose parts are
 * imported by subpath: the MCP SDK's client, its streamable-HTTP transport and its schemas share
 * most of their code, which three chunks would each carry.
 */
const CHUNK_GROUPS = {
  "mcp-sdk.cjs": [
    "@modelcontextprotocol/sdk/client/index.js",
    "@modelcontextprotocol/sdk/client/streamableHttp.js",
    "@modelcontextprotocol/sdk/types.js",
  ],
};
const GROUPED = Object.fromEntries(Object.entries(CHUNK_GROUPS).flatMap(([file, modules]) => modules.map((m) => [m, file])));

/**
 * Optional packages a chunk's dependencies require inside a try/catch and do without when absent
 * (none is installed): ws's native speed-ups and debug's colour support, under @google/genai and
 * google-auth-library.
 * The only externals allowed besides Node's modules and the chunks.
 */
const OPTIONAL_ABSENT = {
  "google-genai-sdk.cjs": ["bufferutil", "utf-8-validate", "supports-color"],
  "anthropic-vertex-sdk.cjs": ["supports-color"],
  "google-auth-library.cjs": ["supports-color"],
};

/**
 * Packages a chunk requires from another chunk instead of holding its own copy: the cloud SDKs'
 * auth libraries, which the adapters also load themselves (each SDK resolves them to the one
 * copy in node_modules, so they are the same modules).
 */
const SHARED_CHUNKS = {
  "anthropic-bedrock-sdk.cjs": ["@aws-sdk/credential-providers"],
  "anthropic-vertex-sdk.cjs": ["google-auth-library"],
};

/** A chunk build's resolver: the packages it shares required from the sibling chunk. */
function siblingChunks(file) {
  const shared = SHARED_CHUNKS[file] ?? [];
  return {
    name: "shared-sibling-chunks",
    setup(b) {
      b.onResolve({ filter: /^[@a-z]/ }, (args) => (shared.includes(args.path) ? { path: `./${CHUNKS[args.path]}`, external: true } : undefined));
    },
  };
}

const asChunks = {
  name: "packages-as-chunks",
  setup(b) {
    b.onResolve({ filter: /^[@a-z]/ }, (args) => {
      const file = CHUNKS[args.path] ?? GROUPED[args.path];
      return file === undefined ? undefined : { path: `./chunks/${file}`, external: true };
    });
  },
};

// vega-canvas's Node build top-level-awaits `import("canvas")`, which CommonJS cannot hold.
// rhema renders charts to SVG without the optional `canvas` package, where that build returns
// null just as its browser build does here (no `document`): the same charts.
const vegaCanvasWithoutCanvas = {
  name: "vega-canvas-without-canvas",
  setup(b) {
    b.onResolve({ filter: /^vega-canvas$/ }, () => ({ path: join(root, "node_modules/vega-canvas/build/vega-canvas.browser.js") }));
  },
};

/**
 * A plugin that rewrites one dependency's source before bundling: `find` (which must be there,
 * else the build fails, so an upgrade that moves it is noticed) becomes `replace`, and `prepend`
 * goes at the top.
 */
function rewriteSource(name, filter, { find, replace, prepend }) {
  return {
    name,
    setup(b) {
      b.onLoad({ filter }, async (args) => {
        const source = await readFile(args.path, "utf8");
        if (!source.includes(find)) throw new Error(`${args.path}: expected ${JSON.stringify(find)} to rewrite; update scripts/build-cli.mjs`);
        return { contents: `${prepend}\n${source.replace(find, replace)}`, loader: "js" };
      });
    },
  };
}

// web-tree-sitter declares `var require` in the function that also runs `await import("module")`;
// once that import is a require() call, it would call the not-yet-set var. Imported at the top.
const treeSitterStaticImport = rewriteSource("web-tree-sitter-static-import", /web-tree-sitter[\\/]web-tree-sitter\.js$/, {
  find: 'const { createRequire } = await import("module");',
  replace: "",
  prepend: 'import { createRequire } from "node:module";',
});

// fdir (under tinyglobby) requires its optional picomatch through createRequire at load time,
// which would load a second, uncached copy from node_modules at every start: the bundled one.
const fdirBundledPicomatch = rewriteSource("fdir-bundled-picomatch", /fdir[\\/]dist[\\/]index\.mjs$/, {
  find: '__require.resolve("picomatch");\n\tpm = __require("picomatch");',
  replace: "pm = __rhemaPicomatch;",
  prepend: 'import __rhemaPicomatch from "picomatch";',
});

/** The options every file of the bundle is built with. */
const common = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  // Whitespace and syntax only: names stay, so a stack trace (RHEMA_DEBUG=1) still reads.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  charset: "ascii",
  // ESM modules read their own location; in the bundle that is the bundle file's.
  define: { "import.meta.url": "__rhemaBundleUrl" },
  banner: { js: 'const __rhemaBundleUrl = require("node:url").pathToFileURL(__filename).href;' },
  supported: { "dynamic-import": false },
  metafile: true,
  logLevel: "warning",
};

await rm(outdir, { recursive: true, force: true });
const outputs = [
  await buildChecked({ ...common, entryPoints: [join(root, "src/cli/bundle-entry.ts")], outfile: join(outdir, "rhema.cjs"), plugins: [asChunks, vegaCanvasWithoutCanvas, treeSitterStaticImport, fdirBundledPicomatch] }, [...Object.values(CHUNKS), ...Object.keys(CHUNK_GROUPS)].map((file) => `./chunks/${file}`)),
];
for (const [file, modules] of Object.entries(CHUNK_GROUPS)) {
  const contents = `module.exports = Object.assign({}, ${modules.map((m) => `require(${JSON.stringify(m)})`).join(", ")});`;
  outputs.push(await buildChecked({ ...common, stdin: { contents, resolveDir: root, sourcefile: `${file}.entry.js` }, outfile: join(outdir, "chunks", file) }, []));
}
for (const [pkg, file] of Object.entries(CHUNKS)) {
  // The package's namespace as the chunk's exports (default included), as `import()` would give it.
  const stdin = { contents: `module.exports = require(${JSON.stringify(pkg)});`, resolveDir: root, sourcefile: `${file}.entry.js` };
  const siblings = (SHARED_CHUNKS[file] ?? []).map((shared) => `./${CHUNKS[shared]}`);
  outputs.push(await buildChecked({ ...common, stdin, outfile: join(outdir, "chunks", file), plugins: [vegaCanvasWithoutCanvas, siblingChunks(file)] }, [...(OPTIONAL_ABSENT[file] ?? []), ...siblings]));
}
// web-tree-sitter finds its runtime's .wasm beside the module that loads it: here, the bundle.
await copyFile(requireFromRoot.resolve("web-tree-sitter/web-tree-sitter.wasm"), join(outdir, "web-tree-sitter.wasm"));
console.log(`build-cli: wrote ${relative(root, outdir)}: ${outputs.map(({ file, bytes }) => `${relative(outdir, file)} ${(bytes / 1e6).toFixed(1)} MB`).join(", ")}`);

/** Builds one file; fails unless it loads nothing from outside but Node's modules and `allowed`, and is ASCII. */
async function buildChecked(options, allowed) {
  const result = await build(options);
  const outside = Object.values(result.metafile.outputs)
    .flatMap((output) => output.imports)
    .filter((entry) => entry.external && !isBuiltin(entry.path) && !allowed.includes(entry.path))
    .map((entry) => entry.path);
  if (outside.length > 0) throw new Error(`build-cli: ${options.outfile} would load ${[...new Set(outside)].join(", ")} from outside the bundle; bundle them`);
  const text = await readFile(options.outfile);
  if (text.some((byte) => byte > 0x7f)) throw new Error(`build-cli: ${options.outfile} is not ASCII; the executable reads it as Latin-1`);
  return { file: options.outfile, bytes: text.length };
}
