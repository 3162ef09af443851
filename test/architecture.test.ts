/**
 * The architecture, enforced: imports flow one way (DESIGN §1), there are no import cycles,
 * and below the CLI nothing reads the environment, the working folder, prints or exits.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { repoRoot } from "./support/paths.js";

const srcDir = join(repoRoot, "src");

/** Which layers each layer may import (besides itself). */
const ALLOWED: Record<string, string[]> = {
  core: [],
  cache: ["core"],
  store: ["core"],
  process: ["core"],
  prompt: ["core"],
  "yaml-source": ["core"],
  policy: ["core", "yaml-source"],
  tools: ["core", "process"],
  transcript: ["core", "cache"],
  providers: ["core", "cache"],
  agent: ["core", "tools", "transcript", "prompt", "store"],
  runner: ["core", "agent", "policy", "providers", "store", "process", "transcript", "cache", "yaml-source"],
  cli: ["core", "cache", "store", "process", "prompt", "policy", "tools", "transcript", "providers", "agent", "runner", "index"],
  index: ["core", "cache", "store", "process", "prompt", "policy", "tools", "transcript", "providers", "agent", "runner"],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : name.endsWith(".ts") ? [path] : [];
  });
}

function layerOf(file: string): string {
  const rel = relative(srcDir, file);
  if (rel === "agent.ts") return "agent";
  if (rel === "index.ts") return "index";
  return rel.split("/")[0]!;
}

function localImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]!);
  return specs.map((s) => resolve(dirname(file), s.replace(/\.js$/, ".ts")));
}

const files = sourceFiles(srcDir);

test("every source file sits in a known layer", () => {
  for (const f of files) assert.ok(layerOf(f) in ALLOWED, `${relative(repoRoot, f)} is in no layer`);
});

test("imports flow one way: core imports nothing of ours, and no layer imports against the flow", () => {
  const wrong: string[] = [];
  for (const f of files) {
    const from = layerOf(f);
    for (const target of localImports(f)) {
      const to = layerOf(target);
      if (to !== from && !ALLOWED[from]!.includes(to)) wrong.push(`${relative(repoRoot, f)} (${from}) imports ${relative(repoRoot, target)} (${to})`);
    }
  }
  assert.deepEqual(wrong, []);
});

test("there are no import cycles in src/", () => {
  const graph = new Map(files.map((f) => [f, localImports(f)]));
  const state = new Map<string, "open" | "done">();
  const cycles: string[] = [];
  const visit = (f: string, path: string[]) => {
    if (state.get(f) === "done") return;
    if (state.get(f) === "open") {
      cycles.push([...path.slice(path.indexOf(f)), f].map((p) => relative(srcDir, p)).join(" → "));
      return;
    }
    state.set(f, "open");
    for (const g of graph.get(f) ?? []) visit(g, [...path, f]);
    state.set(f, "done");
  };
  for (const f of files) visit(f, []);
  assert.deepEqual(cycles, []);
});

test("below the CLI nothing reads process.env or the working folder, prints, or exits", () => {
  const offenders: string[] = [];
  for (const f of files) {
    const layer = layerOf(f);
    if (layer === "cli") continue;
    const text = readFileSync(f, "utf8").replace(/^\s*(\/\/|\/\*|\*).*$/gm, "");
    // The provider factories take keys from the environment, and the shell tool hands the
    // (scrubbed) process environment to the commands it starts: the edges DESIGN §1 allows.
    const envAllowed = (layer === "providers" && f.endsWith("-factory.ts")) || relative(srcDir, f) === "tools/shell.ts";
    for (const [pattern, what] of [
      [/process\.env/, "reads process.env"],
      [/process\.cwd\(/, "reads the working folder"],
      [/console\.(log|error|warn|info)/, "prints"],
      [/process\.exit\(/, "exits"],
    ] as const) {
      if (pattern.test(text) && !(what === "reads process.env" && envAllowed)) offenders.push(`${relative(repoRoot, f)} ${what}`);
    }
  }
  assert.deepEqual(offenders, []);
});
