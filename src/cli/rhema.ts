#!/usr/bin/env node
/**
 * The `rhema` executable: runs the CLI's one-file bundle (dist/bundle/rhema.cjs, built by
 * scripts/build-cli.mjs) with a V8 code cache (code-cache.ts), which halves the time from start
 * to the first model request. The first run of a bundle compiles it and saves the cache as it
 * exits; later runs start from the cache. Without a bundle (only `tsc` was run) it runs the
 * CLI's modules directly.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { codeCacheDir, codeCacheFile, compileWithCodeCache, readCodeCache, writeCodeCache } from "./code-cache.js";

const bundle = fileURLToPath(new URL("../../bundle/rhema.cjs", import.meta.url));
let source: Buffer | null = null;
try {
  source = readFileSync(bundle);
} catch {
  // no bundle: below, the modules
}

if (source === null) {
  const { runAsProcess } = await import("./main.js");
  await runAsProcess();
} else {
  const dir = codeCacheDir(process.env);
  const file = dir === null ? null : codeCacheFile(dir, source);
  const script = compileWithCodeCache(bundle, source, file === null || dir === null ? undefined : readCodeCache(file, dir));
  if (file !== null && dir !== null && !script.cacheUsed) {
    process.once("exit", () => {
      // V8 rejects a cache made under other flags than the reader's. Compiling the bash grammar
      // leaves WebAssembly tier-up off for the rest of the process (policy/shell/grammar/
      // bash-parser.ts says why); the process is ending, so V8's defaults go back for this.
      setFlagsFromString("--wasm-tier-up");
      setFlagsFromString("--wasm-dynamic-tiering");
      writeCodeCache(file, dir, script.createCachedData());
    });
  }
  script.run(createRequire(bundle));
}
