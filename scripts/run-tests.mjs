#!/usr/bin/env node
// Runs the compiled tests with node's test runner and the TAP reporter (CI reads its
// `# pass N` / `# fail N` lines). Node 20's --test expands no globs, so the files are listed
// here. Arguments narrow the run: `npm test -- policy tools/shell` runs files whose path
// contains any of the words.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";

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
// RHEMA_TEST_CONCURRENCY=N runs N test files at once. The default is node's (cores − 1), but at
// least 2: most files mostly wait on the processes they start, so on a 2-core machine one file at
// a time leaves a core idle (the whole suite: 558 s one at a time, 283 s two at a time, here).
const concurrency = process.env.RHEMA_TEST_CONCURRENCY ?? String(Math.max(2, availableParallelism() - 1));
if (!/^[1-9]\d*$/.test(concurrency)) {
  console.error(`run-tests: expected RHEMA_TEST_CONCURRENCY as a whole number from 1, got "${concurrency}"`);
  process.exit(2);
}
// RHEMA_TEST_SHARD=K/N runs the K-th of N shards of the files (node's --test-shard): .ci/run
// splits the end-to-end tests between the other Nodes this way.
const shard = process.env.RHEMA_TEST_SHARD;
if (shard !== undefined && !/^[1-9]\d*\/[1-9]\d*$/.test(shard)) {
  console.error(`run-tests: expected RHEMA_TEST_SHARD as K/N (e.g. 1/2), got "${shard}"`);
  process.exit(2);
}
const flags = [`--test-concurrency=${concurrency}`, ...(shard !== undefined ? [`--test-shard=${shard}`] : [])];
const result = spawnSync(process.execPath, ["--test", "--test-reporter=tap", ...flags, ...files], { stdio: "inherit" });
process.exit(result.status ?? 1);
