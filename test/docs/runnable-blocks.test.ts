/**
 * Every command the docs show is run or checked. The fenced command blocks of README.md and
 * docs/*.md (```sh, ```bash, ```shell, ```console) each carry a mark:
 *
 * - `runnable` (optionally `exit=N`, default 0): run with bash (`set -e -o pipefail`) through the
 *   built CLI — `rhema` on PATH is the repository's `dist/src/cli/rhema.js` — in a temp folder
 *   holding a copy of the example suite (`tasks/`), the repository's `bench/` and `schema/`, and
 *   `node_modules/rhema` (the library); a doc's blocks run in order in one folder, offline (the
 *   example suite's models are scripted). A block expecting a non-zero exit is one command.
 *   ```js runnable blocks run the same way as an ES module with node (`import … from "rhema"`).
 * - `synopsis`: a command's shape with placeholders; each `rhema …` line's command must exist and
 *   each `--flag` on it must be one that command's `--help` lists.
 *
 * An unmarked command block fails the test, except the README's first (the two commands `.ci/run`
 * runs on a clean clone, which install and build).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cp, mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { CLI, cliEnv, runCli } from "../support/cli.js";
import { type FencedBlock, docFiles, fencedBlocks, markValue, readDoc } from "../support/doc-blocks.js";
import { repoRoot } from "../support/paths.js";
import { tempDir } from "../support/temp-dir.js";

const COMMAND_LANGS = new Set(["sh", "bash", "shell", "console"]);
/** The second word of `rhema policy check`, `rhema report merge|compare|trend|html`, `rhema bench replay`. */
const SUBCOMMANDS = new Set(["check", "merge", "compare", "trend", "html", "replay", "calibrate", "show", "prune"]);
const README_FIRST = "npm ci && npm run build && node dist/src/cli/rhema.js run tasks/\nnpm test";

const blocks = docFiles().flatMap((file) => fencedBlocks(file, readDoc(file)));
const where = (b: FencedBlock): string => `${b.file}:${b.line}`;

test("every command block in the docs is marked runnable or synopsis", () => {
  const unmarked = blocks
    .filter((b) => COMMAND_LANGS.has(b.lang) && !b.marks.includes("runnable") && !b.marks.includes("synopsis"))
    .filter((b) => !(b.file === "README.md" && b.body === README_FIRST))
    .map(where);
  assert.deepEqual(unmarked, [], "mark each block `runnable` (and run it here) or `synopsis` (its flags are checked against --help)");
});

/** The words naming a command (`policy check`) and the flags on each `rhema` line of a synopsis. */
function synopsisCommands(body: string): Array<{ words: string[]; flags: string[] }> {
  const out: Array<{ words: string[]; flags: string[] }> = [];
  for (const raw of body.split("\n")) {
    const line = raw.replace(/#.*$/, "");
    const flags = [...line.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((m) => m[0]);
    if (/^rhema\s/.test(line)) {
      const [command = "", sub = ""] = line.split(/\s+/).slice(1);
      out.push({ words: SUBCOMMANDS.has(sub) ? [command, sub] : [command], flags });
    } else if (/^\s/.test(raw) && out.length > 0) {
      out.at(-1)!.flags.push(...flags);
    }
  }
  return out;
}

test("every flag a synopsis shows is one its command's --help lists", async (t) => {
  const dir = await tempDir(t);
  const unknown: string[] = [];
  const synopses = blocks.filter((b) => b.marks.includes("synopsis"));
  for (const block of synopses) {
    const commands = synopsisCommands(block.body);
    assert.ok(commands.length > 0, `${where(block)}: a synopsis shows at least one rhema command`);
    for (const { words, flags } of commands) {
      const help = await runCli([...words, "--help"], { cwd: dir });
      assert.equal(help.code, 0, `${where(block)}: rhema ${words.join(" ")} --help: ${help.stderr}`);
      for (const flag of flags) if (!new RegExp(`(^|\\s)${flag}\\b`, "m").test(help.stdout)) unknown.push(`${where(block)}: rhema ${words.join(" ")} ${flag}`);
    }
  }
  assert.deepEqual(unknown, [], "flags the docs show that the command does not have");
});

/** A folder like a user's checkout: the example suite, the corpus and schemas, the library. */
async function playground(dir: string): Promise<Record<string, string>> {
  await cp(join(repoRoot, "tasks"), join(dir, "tasks"), { recursive: true });
  await symlink(join(repoRoot, "bench"), join(dir, "bench"));
  await symlink(join(repoRoot, "schema"), join(dir, "schema"));
  await mkdir(join(dir, "node_modules"));
  await symlink(repoRoot, join(dir, "node_modules", "rhema"));
  const bin = join(dir, ".bin");
  await mkdir(bin);
  await writeFile(join(bin, "rhema"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });
  const env = cliEnv();
  return { ...env, PATH: `${bin}:${env.PATH ?? ""}` };
}

function run(command: string, args: string[], opts: { cwd: string; env: Record<string, string> }): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

const runnableByFile = new Map<string, FencedBlock[]>();
for (const b of blocks.filter((b) => b.marks.includes("runnable"))) runnableByFile.set(b.file, [...(runnableByFile.get(b.file) ?? []), b]);

test("the docs have runnable blocks", () => {
  assert.ok(runnableByFile.size >= 3, `runnable blocks in ${[...runnableByFile.keys()].join(", ")}`);
});

for (const [file, runnable] of runnableByFile) {
  test(`the runnable blocks of ${file} run as shown`, async (t) => {
    const dir = await tempDir(t, "rhema-docs-");
    const env = await playground(dir);
    for (const [i, block] of runnable.entries()) {
      const expected = Number(markValue(block, "exit") ?? "0");
      let result: { code: number | null; output: string };
      if (COMMAND_LANGS.has(block.lang)) {
        const lines = block.body.split("\n").filter((l) => l.trim() !== "" && !l.trim().startsWith("#"));
        if (expected !== 0) assert.equal(lines.length, 1, `${where(block)}: a block expecting exit ${expected} is one command`);
        result = await run("bash", ["-e", "-o", "pipefail", "-c", block.body], { cwd: dir, env });
      } else if (block.lang === "js") {
        const script = join(dir, `block-${i}.mjs`);
        await writeFile(script, block.body + "\n");
        result = await run(process.execPath, [script], { cwd: dir, env });
      } else {
        assert.fail(`${where(block)}: no way to run a ${block.lang} block`);
      }
      assert.equal(result.code, expected, `${where(block)} exited ${result.code}, the doc says ${expected}:\n${block.body}\n--- output:\n${result.output}`);
    }
  });
}
