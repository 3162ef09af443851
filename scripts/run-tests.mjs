#!/usr/bin/env node
// Runs the compiled tests with node's test runner and the TAP reporter (CI reads its
// `# pass N` / `# fail N` lines). Node 20's --test expands no globs, so the files are listed
// here. Arguments narrow the run: `npm test -- policy tools/shell` runs files whose path
// contains any of the words.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith(".test.js")) out.push(path);
  }
  return out;
}

const words = process.argv.slice(2);
const files = collect("dist/test").filter((f) => words.length === 0 || words.some((w) => f.includes(w)));
if (files.length === 0) {
  console.error("run-tests: no compiled test files found under dist/test (did the build run?)");
  process.exit(1);
}
const result = spawnSync(process.execPath, ["--test", "--test-reporter=tap", ...files], { stdio: "inherit" });
process.exit(result.status ?? 1);
