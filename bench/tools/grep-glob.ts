/**
 * Benchmark, run on demand (not a test): `node dist/bench/tools/grep-glob.js [--files N] [--runs N]`.
 * Builds a tree of 20,000 source files in a temp folder, then times the grep and glob tools
 * against running the same rg binary directly, and prints the median of each and the ratio
 * (target: within 1.5x of rg). The JavaScript backend is timed too, for reference.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool } from "../../src/core/tool.js";
import { globTool } from "../../src/tools/search/glob.js";
import { grepTool } from "../../src/tools/search/grep.js";
import { ripgrepLocator } from "../../src/tools/search/ripgrep.js";

const FILES = numberArg("--files", 20_000);
const RUNS = numberArg("--runs", 9);
const FILES_PER_DIR = 50;
const NEEDLE = "rhemaNeedle";

function numberArg(flag: string, fallback: number): number {
  const at = process.argv.indexOf(flag);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

/** FILES files of 30 lines in 8 x 50 x n folders; one file in 97 holds the needle. */
async function buildTree(root: string): Promise<void> {
  await writeFile(join(root, ".gitignore"), "dist/\n*.log\n");
  const made = new Set<string>();
  for (let i = 0; i < FILES; i++) {
    const dir = join(root, `pkg${i % 8}`, `mod${Math.floor(i / FILES_PER_DIR) % 50}`, `part${Math.floor(i / (FILES_PER_DIR * 50))}`);
    if (!made.has(dir)) await mkdir(dir, { recursive: true });
    made.add(dir);
    const ext = ["ts", "js", "json", "md"][i % 4]!;
    const lines = Array.from({ length: 30 }, (_, l) => `export const value${l} = compute(${i}, ${l}); // line ${l}`);
    if (i % 97 === 0) lines[i % 30] = `const ${NEEDLE} = ${i};`;
    await writeFile(join(dir, `file${i}.${ext}`), `${lines.join("\n")}\n`);
  }
}

async function timeRg(rg: string, args: string[], cwd: string): Promise<number> {
  const started = process.hrtime.bigint();
  const child = spawn(rg, args, { cwd, stdio: ["ignore", "pipe", "ignore"] });
  let bytes = 0;
  child.stdout.on("data", (d: Buffer) => (bytes += d.length));
  await new Promise((resolveExit) => child.on("close", resolveExit));
  if (bytes === 0) throw new Error(`rg ${args.join(" ")} printed nothing`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

async function timeTool(tool: Tool, input: unknown, workspace: string): Promise<number> {
  const started = process.hrtime.bigint();
  const result = await tool.run(input, { workspace, signal: new AbortController().signal });
  if (result.isError || typeof result.content !== "string" || result.content.startsWith("No ")) {
    throw new Error(`${tool.spec.name} failed: ${String(result.content).slice(0, 200)}`);
  }
  return Number(process.hrtime.bigint() - started) / 1e6;
}

async function median(run: () => Promise<number>): Promise<number> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await run());
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

async function main(): Promise<void> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "rhema-bench-")));
  try {
    const built = Date.now();
    await buildTree(root);
    console.log(`tree: ${FILES} files in ${root} (built in ${Date.now() - built} ms); median of ${RUNS} runs after a warm-up`);
    const rg = await ripgrepLocator("auto")();
    if (rg === null) {
      console.log("no rg found (neither on PATH nor from @vscode/ripgrep): nothing to compare against");
      return;
    }
    console.log(`rg: ${rg}`);
    const rows: Array<[string, number, number, number]> = [
      [
        `grep ${NEEDLE}`,
        await median(() => timeRg(rg, ["-n", "--no-heading", NEEDLE], root)),
        await median(() => timeTool(grepTool({ ripgrep: { binary: rg } }), { pattern: NEEDLE }, root)),
        await median(() => timeTool(grepTool({ ripgrep: "js" }), { pattern: NEEDLE }, root)),
      ],
      [
        "glob **/*.ts",
        await median(() => timeRg(rg, ["--files", "-g", "*.ts"], root)),
        await median(() => timeTool(globTool({ ripgrep: { binary: rg } }), { pattern: "**/*.ts" }, root)),
        await median(() => timeTool(globTool({ ripgrep: "js" }), { pattern: "**/*.ts" }, root)),
      ],
    ];
    console.log("");
    console.log("what            rg direct   tool (rg)   ratio   tool (js)   ratio");
    for (const [what, direct, tool, js] of rows) {
      const cell = (ms: number): string => `${ms.toFixed(1)} ms`.padStart(10);
      console.log(`${what.padEnd(15)} ${cell(direct)}  ${cell(tool)}  ${(tool / direct).toFixed(2).padStart(5)}x  ${cell(js)}  ${(js / direct).toFixed(2).padStart(5)}x`);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
