/**
 * Each way of starting the CLI runs the command once: the `rhema` executable (dist/src/cli/rhema.js,
 * which runs the bundle), the bundle run directly (dist/bundle/rhema.cjs) and the modules run
 * directly (dist/src/cli/main.js). In the bundle, main.ts's own "run when started directly" sees
 * the bundle's file as its own; it must leave running to the bundle's entry.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { compiled } from "../support/paths.js";

const run = promisify(execFile);

for (const entry of ["src/cli/rhema.js", "bundle/rhema.cjs", "src/cli/main.js"]) {
  test(`node dist/${entry} --version prints the version once`, async () => {
    const { stdout } = await run(process.execPath, [compiled(entry), "--version"], { env: { ...process.env, RHEMA_COMPILE_CACHE: "off" } });
    assert.match(stdout, /^\d+\.\d+\.\d+\n$/);
  });
}
