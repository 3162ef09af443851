/**
 * The fixture copy timed against `cp -a` (fixture-copy.ts; issue 24's bar: ≤ 1.5× `cp -a`).
 *
 *   node dist/bench/workspace/copy-once.js make FIXTURE         the generated 20,000-file fixture
 *   node dist/bench/workspace/copy-once.js copy FIXTURE TARGET  one copy, for timing a whole process
 *   node dist/bench/workspace/copy-once.js vs FIXTURE DIR [N]   N copies each way, alternating, the
 *                                                               removal between them not timed
 */
import { execFileSync } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { copyFixture } from "../../src/runner/tasks/fixture-copy.js";
import { BENCH_FIXTURE, makeFixture } from "./make-fixture.js";

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timeBoth(fixture: string, dir: string, runs: number): Promise<void> {
  const ours: number[] = [];
  const cps: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < runs; i++) {
    const a = join(dir, "rhema-copy");
    const b = join(dir, "cp-a-copy");
    await rm(a, { recursive: true, force: true });
    await rm(b, { recursive: true, force: true });
    let started = performance.now();
    await copyFixture(fixture, a);
    ours.push(performance.now() - started);
    started = performance.now();
    execFileSync("cp", ["-a", fixture, b]);
    cps.push(performance.now() - started);
    ratios.push(ours.at(-1)! / cps.at(-1)!);
  }
  await rm(join(dir, "rhema-copy"), { recursive: true, force: true });
  await rm(join(dir, "cp-a-copy"), { recursive: true, force: true });
  console.log(`copy ${median(ours).toFixed(0)} ms, cp -a ${median(cps).toFixed(0)} ms (medians of ${runs}); ratio pair by pair: median ${median(ratios).toFixed(2)}× [${ratios.map((r) => r.toFixed(2)).join(" ")}]`);
}

const [command, first, second, third] = process.argv.slice(2);
if (command === "make" && first) console.log(await makeFixture(first, BENCH_FIXTURE));
else if (command === "copy" && first && second) {
  await rm(second, { recursive: true, force: true });
  await copyFixture(first, second);
} else if (command === "vs" && first && second) await timeBoth(first, second, Number(third ?? 5));
else {
  console.error("usage: copy-once.js make FIXTURE | copy FIXTURE TARGET | vs FIXTURE DIR [RUNS]");
  process.exit(2);
}
