#!/usr/bin/env node
// Runs the compiled tests with node's test runner and the TAP reporter (CI reads its
// `# pass N` / `# fail N` lines). Node 20's --test expands no globs, so the files are listed
// here. Arguments narrow the run: `npm test -- policy tools/shell` runs files whose path
// contains any of the words.
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawn, spawnSync } from "node:child_process";
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
// RHEMA_TEST_QUEUE=DIR shares the files with other runners given the same folder (.ci/run's
// other Nodes, side by side): each runner claims the next file not yet claimed (an atomic mkdir in
// DIR) and runs it, so they end together whatever the files cost. Fixed shards ended 140 s apart.
const queue = process.env.RHEMA_TEST_QUEUE;
if (queue !== undefined) {
  if (shard !== undefined) {
    console.error("run-tests: RHEMA_TEST_QUEUE and RHEMA_TEST_SHARD each split the files; give one");
    process.exit(2);
  }
  process.exit(await runFromQueue(queue, files, Number(concurrency)));
}
const flags = [`--test-concurrency=${concurrency}`, ...(shard !== undefined ? [`--test-shard=${shard}`] : [])];
const result = spawnSync(process.execPath, ["--test", "--test-reporter=tap", ...flags, ...files], { stdio: "inherit" });
process.exit(result.status ?? 1);

/**
 * Runs the files of `files` this runner claims in `dir`, `workers` at a time, each file's TAP
 * printed whole when it ends; then a `# queue:` line with the counts. Exit 1 when a file failed.
 */
async function runFromQueue(dir, files, workers) {
  mkdirSync(dir, { recursive: true });
  const claim = (file) => {
    try {
      mkdirSync(join(dir, file.replaceAll("/", "__")));
      return true;
    } catch (err) {
      if (err.code === "EEXIST") return false;
      throw err;
    }
  };
  let next = 0;
  const ran = [];
  const failed = [];
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++];
      if (!claim(file)) continue;
      const started = Date.now();
      const { code, output } = await runOne(file);
      process.stdout.write(output);
      ran.push(file);
      if (code !== 0) failed.push(file);
      console.log(`# queue: ${file} exit ${code} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  console.log(`# queue: this runner ran ${ran.length} of ${files.length} files; ${failed.length} failed${failed.length > 0 ? `: ${failed.join(", ")}` : ""}`);
  return failed.length > 0 ? 1 : 0;
}

/** One test file under node's runner, its output kept until it ends. */
function runOne(file) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--test", "--test-reporter=tap", file], { stdio: ["ignore", "pipe", "pipe"] });
    const chunks = [];
    child.stdout.on("data", (c) => chunks.push(c));
    child.stderr.on("data", (c) => chunks.push(c));
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString() }));
  });
}
