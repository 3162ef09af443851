/**
 * Benchmark, run on demand (not a test): `node dist/bench/tokenizers.js [--runs N]`.
 * The two OpenAI tokenizer packages rhema could count with, side by side on real-looking text
 * (this repository's TypeScript, its docs, tool-call JSON and line-numbered file reads as the
 * read tool returns them): the time to load each encoding (a fresh process each run, as a CLI
 * start pays it), the median time to count the whole sample, and whether the two agree.
 * js-tiktoken is not a dependency (gpt-tokenizer was chosen, src/tokens/tokenizer-counter.ts says
 * why): install it beside to compare, `npm install --no-save js-tiktoken@1.0.21`.
 * Then each encoding's bundle size: esbuild, as scripts/build-cli.mjs bundles a chunk (CommonJS,
 * whitespace-minified).
 */
import { execFileSync } from "node:child_process";
import { build } from "esbuild";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const RUNS = numberArg("--runs", 7);
const root = join(import.meta.dirname, "..", "..");

function numberArg(flag: string, fallback: number): number {
  const at = process.argv.indexOf(flag);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

function median(values: number[]): number {
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function filesUnder(dir: string, ext: string, limit: number): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      if (out.length >= limit) return;
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(ext)) out.push(path);
    }
  };
  walk(dir);
  return out;
}

/** The sample: code, prose, tool-call JSON and numbered file reads, about 1 MB in all. */
function sampleTexts(): string[] {
  const code = filesUnder(join(root, "src"), ".ts", 80).map((f) => readFileSync(f, "utf8"));
  const prose = filesUnder(join(root, "docs"), ".md", 20).map((f) => readFileSync(f, "utf8"));
  const calls = code.slice(0, 30).map((text, i) => JSON.stringify({ path: `src/file${i}.ts`, old: text.slice(0, 400), new: text.slice(400, 900) }));
  const reads = code.slice(30, 60).map((text) => text.split("\n").map((line, i) => `${String(i + 1).padStart(6)}\t${line}`).join("\n"));
  return [...code, ...prose, ...calls, ...reads];
}

type Counter = (text: string) => number;

/** js-tiktoken, imported by a name tsc does not resolve: it is installed only to run this comparison. */
async function tiktoken(encoding: string): Promise<Counter> {
  const lite = "js-tiktoken/lite";
  const [{ Tiktoken }, ranks] = await Promise.all([import(lite), import(`js-tiktoken/ranks/${encoding}`)]);
  const enc = new Tiktoken(ranks.default);
  return (text) => (enc.encode(text, [], []) as number[]).length;
}

const LOADERS: Record<string, Record<string, () => Promise<Counter>>> = {
  "gpt-tokenizer": {
    o200k_base: async () => {
      const { encode } = await import("gpt-tokenizer/encoding/o200k_base");
      return (text) => encode(text, { allowedSpecial: new Set(), disallowedSpecial: new Set() }).length;
    },
    cl100k_base: async () => {
      const { encode } = await import("gpt-tokenizer/encoding/cl100k_base");
      return (text) => encode(text, { allowedSpecial: new Set(), disallowedSpecial: new Set() }).length;
    },
  },
  "js-tiktoken": {
    o200k_base: () => tiktoken("o200k_base"),
    cl100k_base: () => tiktoken("cl100k_base"),
  },
};

/** One child process: load one encoding, print the load time. */
async function childLoad(pkg: string, encoding: string): Promise<void> {
  const start = performance.now();
  const count = await LOADERS[pkg]![encoding]!();
  count("warm up");
  console.log(JSON.stringify({ loadMs: performance.now() - start }));
}

const ENTRIES: Record<string, Record<string, string>> = {
  "gpt-tokenizer": {
    o200k_base: 'module.exports = require("gpt-tokenizer/encoding/o200k_base");',
    cl100k_base: 'module.exports = require("gpt-tokenizer/encoding/cl100k_base");',
  },
  "js-tiktoken": {
    o200k_base: 'module.exports = { ...require("js-tiktoken/lite"), ranks: require("js-tiktoken/ranks/o200k_base") };',
    cl100k_base: 'module.exports = { ...require("js-tiktoken/lite"), ranks: require("js-tiktoken/ranks/cl100k_base") };',
  },
};

async function bundleBytes(contents: string): Promise<number> {
  const result = await build({
    stdin: { contents, resolveDir: root, sourcefile: "entry.js" }, bundle: true, platform: "node", format: "cjs",
    target: "node20", minifyWhitespace: true, minifySyntax: true, legalComments: "none", charset: "ascii", write: false, logLevel: "silent",
  });
  return result.outputFiles[0]!.contents.length;
}

async function main(): Promise<void> {
  const child = process.argv.indexOf("--child");
  if (child >= 0) return childLoad(process.argv[child + 1]!, process.argv[child + 2]!);
  const texts = sampleTexts();
  const chars = texts.reduce((n, t) => n + t.length, 0);
  console.log(`sample: ${texts.length} texts, ${(chars / 1e6).toFixed(2)} M characters; ${RUNS} runs each, medians`);
  const totals = new Map<string, number>();
  for (const encoding of ["o200k_base", "cl100k_base"]) {
    for (const pkg of Object.keys(LOADERS)) {
      const loads: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        const out = execFileSync(process.execPath, [process.argv[1]!, "--child", pkg, encoding], { encoding: "utf8" });
        loads.push((JSON.parse(out) as { loadMs: number }).loadMs);
      }
      const count = await LOADERS[pkg]![encoding]!();
      const times: number[] = [];
      let total = 0;
      for (let r = 0; r < RUNS; r++) {
        const start = performance.now();
        total = texts.reduce((n, t) => n + count(t), 0);
        times.push(performance.now() - start);
      }
      totals.set(`${pkg}/${encoding}`, total);
      const ms = median(times);
      console.log(`${pkg.padEnd(14)} ${encoding.padEnd(12)} load ${median(loads).toFixed(0).padStart(5)} ms  count ${ms.toFixed(0).padStart(5)} ms (${(chars / ms / 1000).toFixed(1)} M chars/s)  tokens ${total}  chars/token ${(chars / total).toFixed(2)}`);
    }
  }
  for (const [pkg, entries] of Object.entries(ENTRIES)) {
    for (const [encoding, contents] of Object.entries(entries)) console.log(`${pkg.padEnd(14)} ${encoding.padEnd(12)} chunk ${((await bundleBytes(contents)) / 1e6).toFixed(2)} MB`);
  }
  for (const encoding of ["o200k_base", "cl100k_base"]) {
    const a = totals.get(`gpt-tokenizer/${encoding}`);
    const b = totals.get(`js-tiktoken/${encoding}`);
    console.log(`${encoding}: the packages ${a === b ? "agree" : `DISAGREE (${a} vs ${b})`}`);
  }
}

await main();
