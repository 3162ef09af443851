#!/usr/bin/env node
/**
 * The `rhema` executable: runs the CLI's bundle (dist/bundle/rhema.cjs and the chunks it loads
 * on demand, built by scripts/build-cli.mjs) with V8 code caches (code-cache.ts), which halves
 * the time from start to the first model request. The first run of a bundle compiles it and
 * saves the caches as it exits; later runs start from them. Without a bundle (only `tsc` was
 * run) it runs the CLI's modules directly.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { CodeCachedBundle, codeCacheDir } from "./code-cache.js";
import { runInUserNamespace } from "./user-namespace-entry.js";

/** exit-codes.ts's EXIT_INTERRUPTED, not imported: the executable loads nothing the bundle holds. */
const EXIT_INTERRUPTED = 130;

const bundle = fileURLToPath(new URL("../../bundle/rhema.cjs", import.meta.url));

// A run by a user who is not root, which may lay workspaces over a base, goes on inside a user namespace (user-namespace-entry.ts).
const inNamespace = runInUserNamespace(codeCacheDir(process.env));
if (inNamespace !== null) {
  await inNamespace;
} else if (!existsSync(bundle)) {
  const { runAsProcess } = await import("./main.js");
  await runAsProcess();
} else {
  // A command's first word names its caches: `rhema --version` compiles little of what `rhema run` needs.
  const command = process.argv[2] !== undefined && /^[a-z]+$/.test(process.argv[2]) ? process.argv[2] : "";
  const files = new CodeCachedBundle(codeCacheDir(process.env), command);
  process.once("exit", (code) => {
    // An interrupted run ends at once; the next run saves the caches.
    if (!files.needsSaving || code === EXIT_INTERRUPTED) return;
    // V8 rejects a cache made under other flags than the reader's. Compiling the bash grammar
    // leaves WebAssembly tier-up off for the rest of the process (policy/shell/grammar/
    // bash-parser.ts says why); the process is ending, so V8's defaults go back for this.
    // Nothing in the exit path may throw: a cache that cannot be saved is no cache, never a stack trace.
    try {
      setFlagsFromString("--wasm-tier-up");
      setFlagsFromString("--wasm-dynamic-tiering");
      files.saveCaches();
    } catch {
      // the next run compiles again
    }
  });
  files.run(bundle);
}
