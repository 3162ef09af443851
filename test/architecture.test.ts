/**
 * The architecture, enforced on the real import graph (docs/design.md §2): imports flow one way by the
 * layer table, there are no cycles, every file sits in a layer, core does no I/O, and below the
 * edges (cli, action) nothing reads the environment, arguments or working folder, prints, exits
 * or installs process handlers. Fixture trees show the checker catches each kind of break.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type Violation, checkArchitecture, describeViolation } from "./support/check-architecture.js";
import { repoRoot } from "./support/paths.js";
import { tempDir } from "./support/temp-dir.js";

async function writeTree(root: string, files: Record<string, string[]>): Promise<void> {
  await writeFile(join(root, "package.json"), '{ "type": "module" }\n');
  for (const [rel, lines] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), lines.join("\n") + "\n");
  }
}

test("the source tree keeps the architecture of docs/design.md §2", () => {
  assert.deepEqual(checkArchitecture(join(repoRoot, "src")).map(describeViolation), []);
});

/** A small tree in which every layer imports only what it may, edges included. */
const CLEAN: Record<string, string[]> = {
  "src/core/port.ts": ["export interface Port { name: string }", "export const stamp = (now: () => Date): string => now().toISOString();"],
  "src/process/group.ts": ['import { spawn } from "node:child_process";', 'import type { Port } from "../core/port.js";', "export const start = (p: Port) => spawn(p.name, { detached: true });", "export const stop = (pid: number): void => void process.kill(-pid);"],
  "src/cache/rules.ts": ["export const ttlMs = 300_000;"],
  "src/tools/shell.ts": ['import { start } from "../process/group.js";', 'export const shell = (env: Record<string, string>) => ({ env, start, at: process.platform });'],
  "src/store/file.ts": ['import { readFile } from "node:fs/promises";', "export const load = (path: string) => readFile(path, \"utf8\");"],
  "src/agent.ts": ['import { shell } from "./tools/shell.js";', 'import { load } from "./store/file.js";', 'export type Stamp = typeof import("./core/port.js").stamp;', "export const agent = { shell, load };"],
  "src/providers/lazy.ts": ['import { ttlMs } from "../cache/rules.js";', "export const provider = { ttlMs };"],
  "src/runner/run.ts": [
    'import { createRequire } from "node:module";',
    'import { agent } from "../agent.js";',
    "const load = createRequire(import.meta.url);",
    'export const rules = load("../cache/rules.js") as unknown;',
    'export const provider = () => import("../providers/lazy.js");',
    "export const run = (env: Record<string, string>) => agent.shell(env);",
  ],
  "src/index.ts": ['export { agent } from "./agent.js";', 'export { run } from "./runner/run.js";'],
  "src/cli/main.ts": ['import { run } from "../index.js";', "run({ HOME: process.env.HOME ?? \"\" });", "process.stdout.write(process.argv.join(\" \") + process.cwd());", "console.log(\"done\");", "process.exit(0);"],
  "src/action/main.ts": ['import { run } from "../runner/run.js";', 'process.on("SIGTERM", () => run({}));'],
};

test("a sound tree gives no violations", async (t) => {
  const root = await tempDir(t);
  await writeTree(root, CLEAN);
  assert.deepEqual(checkArchitecture(join(root, "src")), []);
});

/** One break of each kind, each on a known line. */
const BROKEN: Record<string, string[]> = {
  "outside.ts": ["export const outside = 1;"],
  "src/core/types.ts": ["export interface Port { name: string }"],
  "src/core/io.ts": [
    'import { readFileSync } from "node:fs";',
    'import type { Stats } from "fs";',
    "export const read = (p: string): string => readFileSync(p, \"utf8\");",
    'export const later = () => import("node:child_process");',
    "export type S = Stats;",
  ],
  "src/runner/run.ts": ['import type { Port } from "../core/types.js";', "export const run = (): number => ({ name: \"x\" } as Port).name.length;"],
  "src/runner/loose.ts": [
    "export const byName = (name: string) => import(name);",
    'export { gone } from "./missing.js";',
    'import { outside } from "../../outside.js";',
    "export const o = outside;",
  ],
  "src/providers/thing.ts": ["export interface Thing { id: string }"],
  "src/policy/rules.ts": ["export const rules: string[] = [];"],
  "src/store/state.ts": ["export const state = 1;"],
  "src/transcript/mirror.ts": ["export const mirror = 1;"],
  "src/tools/static.ts": ['import { run } from "../runner/run.js";', "export const s = run;"],
  "src/tools/type-only.ts": ['import type { Port } from "../core/types.js";', 'import type { Thing } from "../providers/thing.js";', "export type T = Port | Thing;"],
  "src/tools/dynamic.ts": ['export const load = () => import("../policy/rules.js");'],
  "src/tools/required.ts": [
    'import { createRequire as makeRequire } from "node:module";',
    "const load = makeRequire(import.meta.url);",
    'export const direct = makeRequire(import.meta.url)("../store/state.js") as unknown;',
    'export const viaAlias = load("../transcript/mirror.js") as unknown;',
  ],
  "src/cache/one.ts": ['import { two } from "./two.js";', "export const one = (): unknown => two;"],
  "src/cache/two.ts": ['import { one } from "./one.js";', "export const two = (): unknown => one;"],
  "src/helpers/misc.ts": ["export const misc = 1;"],
  "src/cli/main.ts": ['import { run } from "../runner/run.js";', "console.log(process.env.HOME, process.argv, process.cwd());", "process.exit(run());"],
  "src/index.ts": ['export { run } from "./runner/run.js";', 'export * from "./cli/main.js";'],
  "src/store/env-reads.ts": [
    "export const home = process.env.HOME;",
    'export const viaIndex = process["env"];',
    "const { env } = process;",
    "export const fromPattern = env;",
    "const p = process;",
    "export const args = p.argv;",
    "export const global = globalThis.process.env;",
    "const { ...everything } = process;",
    'export const pick = (key: "pid" | "env") => [process[key], everything];',
  ],
  "src/store/env-imports.ts": [
    'import process from "node:process";',
    'import { env as environment } from "node:process";',
    "export const here = process.cwd();",
    'import * as proc from "process";',
    "export const all = [environment, proc.argv];",
  ],
  "src/store/printing.ts": [
    "export function say(text: string): void {",
    "  process.stdout.write(text);",
    "  process.stderr.write(text);",
    "  console.log(text);",
    "}",
    "export function leave(): never { return process.exit(1); }",
    "export function handlers(): void {",
    '  process.on("exit", () => {});',
    '  process.once("SIGINT", () => {});',
    '  process.addListener("SIGTERM", () => {});',
    "}",
  ],
  "src/store/allowed.ts": [
    'import type { ChildProcess } from "node:child_process";',
    "// process.env.SECRET and process.exit() in a comment do not count",
    "/* process.argv */",
    'export const text = "process.env.HOME and process.cwd()";',
    "export const template = `process.stdout ${1}`;",
    "export const facts = [process.pid, process.platform, process.execPath, process.hrtime.bigint(), process.memoryUsage().rss, process.versions.node];",
    'export function stop(pid: number): void { process.kill(pid, "SIGTERM"); }',
    'export function notTheGlobal(process: { env: string; argv: string[] }): string { return process.env + process.argv.join(""); }',
    'export function child(c: ChildProcess): void { c.stdout?.on("data", () => {}); c.on("exit", () => {}); }',
  ],
};

const EXPECTED: Violation[] = [
  { rule: "cycle", files: ["cache/one.ts", "cache/two.ts"] },
  { rule: "core-io", file: "core/io.ts", line: 1, kind: "static", specifier: "node:fs" },
  { rule: "core-io", file: "core/io.ts", line: 2, kind: "type", specifier: "fs" },
  { rule: "core-io", file: "core/io.ts", line: 4, kind: "dynamic", specifier: "node:child_process" },
  { rule: "unknown-layer", file: "helpers/misc.ts" },
  { rule: "layer", file: "index.ts", line: 2, kind: "static", target: "cli/main.ts", from: "index", to: "cli" },
  { rule: "computed-import", file: "runner/loose.ts", line: 1, kind: "dynamic" },
  { rule: "unresolved-import", file: "runner/loose.ts", line: 2, kind: "static", specifier: "./missing.js" },
  { rule: "outside-source", file: "runner/loose.ts", line: 3, kind: "static", specifier: "../../outside.js" },
  { rule: "ambient", file: "store/env-imports.ts", line: 2, object: "process", member: "env" },
  { rule: "ambient", file: "store/env-imports.ts", line: 3, object: "process", member: "cwd" },
  { rule: "ambient", file: "store/env-imports.ts", line: 5, object: "process", member: "argv" },
  { rule: "ambient", file: "store/env-reads.ts", line: 1, object: "process", member: "env" },
  { rule: "ambient", file: "store/env-reads.ts", line: 2, object: "process", member: "env" },
  { rule: "ambient", file: "store/env-reads.ts", line: 3, object: "process", member: "env" },
  { rule: "ambient", file: "store/env-reads.ts", line: 6, object: "process", member: "argv" },
  { rule: "ambient", file: "store/env-reads.ts", line: 7, object: "process", member: "env" },
  { rule: "ambient", file: "store/env-reads.ts", line: 8, object: "process", member: "...rest" },
  { rule: "ambient", file: "store/env-reads.ts", line: 9, object: "process", member: "[computed]" },
  { rule: "ambient", file: "store/printing.ts", line: 2, object: "process", member: "stdout" },
  { rule: "ambient", file: "store/printing.ts", line: 3, object: "process", member: "stderr" },
  { rule: "ambient", file: "store/printing.ts", line: 4, object: "console", member: "log" },
  { rule: "ambient", file: "store/printing.ts", line: 6, object: "process", member: "exit" },
  { rule: "ambient", file: "store/printing.ts", line: 8, object: "process", member: "on" },
  { rule: "ambient", file: "store/printing.ts", line: 9, object: "process", member: "once" },
  { rule: "ambient", file: "store/printing.ts", line: 10, object: "process", member: "addListener" },
  { rule: "layer", file: "tools/dynamic.ts", line: 1, kind: "dynamic", target: "policy/rules.ts", from: "tools", to: "policy" },
  { rule: "layer", file: "tools/required.ts", line: 3, kind: "require", target: "store/state.ts", from: "tools", to: "store" },
  { rule: "layer", file: "tools/required.ts", line: 4, kind: "require", target: "transcript/mirror.ts", from: "tools", to: "transcript" },
  { rule: "layer", file: "tools/static.ts", line: 1, kind: "static", target: "runner/run.ts", from: "tools", to: "runner" },
  { rule: "layer", file: "tools/type-only.ts", line: 2, kind: "type", target: "providers/thing.ts", from: "tools", to: "providers" },
];

test("a broken tree: each bad import, the cycle, core I/O and each edge-only process use is reported", async (t) => {
  const root = await tempDir(t);
  await writeTree(root, BROKEN);
  const found = checkArchitecture(join(root, "src"));
  assert.deepEqual(found, EXPECTED, found.map(describeViolation).join("\n"));
});

test("each violation reads as one line naming the file, line and rule", () => {
  assert.deepEqual(EXPECTED.slice(0, 2).concat(EXPECTED.at(-1)!).map(describeViolation), [
    "import cycle: cache/one.ts → cache/two.ts → cache/one.ts",
    'core/io.ts:1 (core) imports "node:fs": core does no file, process or network I/O',
    "tools/type-only.ts:2 (tools) has a type import of providers/thing.ts (providers): tools may not import providers",
  ]);
});
