/**
 * Benchmark, run on demand (not a test): `npm run bench:sandbox [-- --runs N]`. Times `true` run
 * four ways, interleaved, and prints the median of each over N runs (default 50) and the costs
 * added: a plain `spawn("bash", ["-c", "true"])`; the same spawned held and released at once
 * (held-spawn.ts); one unsandboxed shell-tool call (held spawn + the death watcher + the group
 * checks); one sandboxed shell-tool call (bwrap); and bwrap alone with the same flags, to tell
 * bwrap's own setup from ours. Target: the sandbox adds ≤ 15 ms to a call. The machine's load
 * average is printed: on a busy machine every figure grows.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { spawnHeld } from "../src/process/held-spawn.js";
import { bwrapArgv } from "../src/process/sandbox.js";
import { probeSandbox } from "../src/process/sandbox-probe.js";
import { DEFAULT_PATH, shellTool } from "../src/tools/shell.js";

const RUNS = numberArg("--runs", 50);
const ENV = { PATH: DEFAULT_PATH };

function numberArg(flag: string, fallback: number): number {
  const at = process.argv.indexOf(flag);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

async function plainSpawn(cwd: string): Promise<void> {
  const child = spawn("bash", ["-c", "true"], { cwd, env: ENV, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  await once(child, "close");
}

/** bwrap with the sandbox's flags spawned directly, no holder: the part of the cost that is bwrap's own. */
async function bareBwrap(cwd: string, bwrap: string): Promise<void> {
  const [program, ...args] = bwrapArgv({ bwrap, workspace: cwd, network: false, env: ENV }, ["bash", "-c", "true"]);
  const child = spawn(program!, args, { cwd, env: {}, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  await once(child, "close");
}

async function heldSpawn(cwd: string): Promise<void> {
  const held = await spawnHeld({ argv: ["bash", "-c", "true"], cwd, env: ENV });
  const closed = once(held.child, "close");
  held.release();
  await closed;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const probe = await probeSandbox();
  const ws = await realpath(await mkdtemp(join("/var/tmp", "rhema-bench-sbx-")));
  const ctx = { workspace: ws, signal: new AbortController().signal };
  const plainTool = shellTool({ env: ENV });
  const sandboxTool = shellTool({ env: ENV, sandbox: { network: false, ...(probe.ok ? { bwrap: probe.bwrap } : {}) } });
  const ways: Array<[string, () => Promise<unknown>]> = [
    ["plain spawn (bash -c true)", () => plainSpawn(ws)],
    ["held spawn, released at once", () => heldSpawn(ws)],
    ["shell tool, unsandboxed", () => plainTool.run({ command: "true" }, ctx)],
    ...(probe.ok ? [
      ["shell tool, sandboxed (bwrap)", () => sandboxTool.run({ command: "true" }, ctx)],
      ["bwrap alone (same flags, no holder)", () => bareBwrap(ws, probe.bwrap)],
    ] as Array<[string, () => Promise<unknown>]> : []),
  ];
  const times = new Map<string, number[]>(ways.map(([name]) => [name, []]));
  try {
    for (const [, run] of ways) await run(); // warm up
    for (let i = 0; i < RUNS; i++) {
      for (const [name, run] of ways) {
        const started = process.hrtime.bigint();
        await run();
        times.get(name)!.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
  const med = new Map([...times].map(([name, xs]) => [name, median(xs)]));
  console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}; ${cpus().length} cpus`);
  console.log(`median of ${RUNS} runs each${probe.ok ? `, bubblewrap ${probe.version}` : `; no sandbox here: ${probe.reason}`}`);
  for (const [name, m] of med) console.log(`  ${name.padEnd(34)} ${m.toFixed(2).padStart(8)} ms`);
  const [plain, held, tool, sandboxed, bare] = ways.map(([name]) => med.get(name)!);
  console.log(`  held spawn over plain spawn        ${(held! - plain!).toFixed(2).padStart(8)} ms`);
  console.log(`  unsandboxed call over plain spawn  ${(tool! - plain!).toFixed(2).padStart(8)} ms (held spawn + death watcher + group checks)`);
  if (sandboxed !== undefined) {
    const added = sandboxed - tool!;
    console.log(`  sandboxed call over unsandboxed    ${added.toFixed(2).padStart(8)} ms (target ≤ 15 ms: ${added <= 15 ? "met" : "MISSED"})`);
    console.log(`  of which bwrap's own setup         ${(bare! - plain!).toFixed(2).padStart(8)} ms (bwrap alone over plain spawn)`);
  }
}

await main();
