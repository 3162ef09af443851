/**
 * The escape corpus: every way out of the workspace we know, for reads and writes, through
 * each tool that takes a path. Each must be refused with a ToolError the model reads (by plan
 * and again by run), and nothing outside may be read into a result, changed or created.
 */
import assert from "node:assert/strict";
import { mkdir, open, readFile, readdir, rename, symlink, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { ToolError } from "../../src/core/errors.js";
import type { Tool, ToolContext } from "../../src/core/tool.js";
import { builtinTools } from "../../src/tools/index.js";
import { tempDir } from "../support/temp-dir.js";
import { toolContext } from "./tool-harness.js";

const SECRET = "top secret sentinel";

interface Sandbox { ws: string; outside: string; evil: string; ctx: ToolContext; tools: Record<string, Tool> }

async function sandbox(t: Parameters<typeof tempDir>[0]): Promise<Sandbox> {
  const base = await tempDir(t);
  const ws = join(base, "ws");
  const outside = join(base, "outside");
  const evil = `${ws}-evil`;
  await mkdir(join(ws, "src"), { recursive: true });
  await mkdir(outside);
  await mkdir(evil);
  await writeFile(join(outside, "secret.txt"), SECRET);
  await writeFile(join(evil, "secret.txt"), SECRET);
  await symlink(outside, join(ws, "out"));
  await symlink(join(outside, "secret.txt"), join(ws, "secret-link"));
  await symlink(outside, join(ws, "chain3"));
  await symlink("chain3", join(ws, "chain2"));
  await symlink("../chain2", join(ws, "src", "chain1"));
  await symlink("../outside", join(ws, "rel-out"));
  await symlink(join(outside, "new.txt"), join(ws, "dangling"));
  await symlink(join(outside, "newdir"), join(ws, "dangling-dir"));
  const ctx = toolContext(ws);
  const tools = Object.fromEntries(builtinTools({ ripgrep: "auto" }).map((tool) => [tool.spec.name, tool]));
  return { ws, outside, evil, ctx, tools };
}

/** Nothing outside changed: the sentinels hold, nothing new appeared. */
async function assertOutsideUntouched(s: Sandbox): Promise<void> {
  assert.equal(await readFile(join(s.outside, "secret.txt"), "utf8"), SECRET);
  assert.equal(await readFile(join(s.evil, "secret.txt"), "utf8"), SECRET);
  assert.deepEqual(await readdir(s.outside), ["secret.txt"]);
  assert.deepEqual(await readdir(s.evil), ["secret.txt"]);
}

/** A way out: the path given to file tools and to folder tools (built from the sandbox). */
interface Way { name: string; file: (s: Sandbox) => string; dir?: (s: Sandbox) => string; prepare?: (s: Sandbox) => Promise<void> }

const WAYS: Way[] = [
  { name: "'..' out of the root", file: () => "../outside/secret.txt", dir: () => "../outside" },
  { name: "'..' through a subfolder", file: () => "src/../../outside/secret.txt", dir: () => "src/../.." },
  { name: "an absolute path elsewhere", file: (s) => join(s.outside, "secret.txt"), dir: (s) => s.outside },
  { name: "an absolute system path", file: () => "/etc/passwd", dir: () => "/etc" },
  { name: "a doubled leading slash", file: () => "//etc/passwd", dir: () => "//etc" },
  { name: "a sibling folder sharing the workspace's name as prefix", file: (s) => join(s.evil, "secret.txt"), dir: (s) => s.evil },
  { name: "a symlinked folder pointing outside", file: () => "out/secret.txt", dir: () => "out" },
  { name: "a symlinked file pointing outside", file: () => "secret-link" },
  { name: "a relative symlink climbing out", file: () => "rel-out/secret.txt", dir: () => "rel-out" },
  { name: "a symlink chain pointing outside", file: () => "src/chain1/secret.txt", dir: () => "src/chain1" },
  { name: "a dangling symlink to a new file outside", file: () => "dangling" },
  { name: "a dangling symlink to a new folder outside", file: () => "dangling-dir/x.txt", dir: () => "dangling-dir" },
  { name: "/proc/self/root", file: (s) => `/proc/self/root${s.outside}/secret.txt`, dir: (s) => `/proc/self/root${s.outside}` },
  { name: "/proc/<pid>/root", file: (s) => `/proc/${process.pid}/root${s.outside}/secret.txt`, dir: (s) => `/proc/${process.pid}/root${s.outside}` },
  { name: "/proc/self/cwd", file: () => "/proc/self/cwd/package.json", dir: () => "/proc/self/cwd" },
  {
    name: "a symlink a shell command just created",
    prepare: async (s) => {
      const result = await s.tools.shell!.run({ command: `ln -s ${JSON.stringify(s.outside)} fresh-link` }, s.ctx);
      assert.equal(result.isError, undefined, String(result.content));
    },
    file: () => "fresh-link/secret.txt",
    dir: () => "fresh-link",
  },
];

/** The calls that take each way, per tool: [tool name, input]. */
function callsFor(way: Way, s: Sandbox): Array<[string, Record<string, unknown>]> {
  const file = way.file(s);
  const calls: Array<[string, Record<string, unknown>]> = [
    ["read_file", { path: file }],
    ["write_file", { path: file, content: "pwned" }],
    ["edit_file", { path: file, old: SECRET, new: "pwned" }],
    ["grep", { pattern: "secret", path: file }],
  ];
  if (way.dir) {
    const dir = way.dir(s);
    calls.push(["list_dir", { path: dir }], ["glob", { pattern: "*", path: dir }], ["grep", { pattern: "secret", path: dir }]);
    calls.push(["write_file", { path: `${dir}/created.txt`, content: "pwned" }]);
  }
  return calls;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The refusal must be the workspace scope's, and no other ToolError: it names the path the call
 * gave and the workspace, and (after a link) where the path led.
 */
async function assertRefused(promise: Promise<unknown>, what: string, s: Sandbox, path: unknown): Promise<void> {
  const refusal = new RegExp(
    `^Path "${escapeRegExp(String(path))}" is outside the workspace ${escapeRegExp(s.ws)}( \\(it resolves to [^)]+\\))?\\. ` +
      "Tools can only use paths inside the workspace\\.$",
  );
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ToolError, `${what}: expected a ToolError, got ${String(err)}`);
    assert.match(err.message, refusal, what);
    return true;
  }, `${what} was not refused`);
}

for (const way of WAYS) {
  const names = way.dir ? ["read_file", "write_file", "edit_file", "list_dir", "glob", "grep"] : ["read_file", "write_file", "edit_file", "grep"];
  for (const name of names) {
    test(`refuses ${way.name} via ${name}`, async (t) => {
      const s = await sandbox(t);
      await way.prepare?.(s);
      const calls = callsFor(way, s).filter(([tool]) => tool === name);
      assert.ok(calls.length > 0);
      for (const [tool, input] of calls) {
        const what = `${tool} ${JSON.stringify(input)}`;
        await assertRefused(s.tools[tool]!.plan!(input, s.ctx), `plan of ${what}`, s, input.path);
        await assertRefused(s.tools[tool]!.run(input, s.ctx), `run of ${what}`, s, input.path);
      }
      await assertOutsideUntouched(s);
    });
  }
}

test("refuses at run a folder swapped for a symlink pointing outside after plan", async (t) => {
  const s = await sandbox(t);
  await mkdir(join(s.ws, "swap"));
  for (const [tool, input] of [
    ["read_file", { path: "swap/secret.txt" }],
    ["write_file", { path: "swap/secret.txt", content: "pwned" }],
    ["edit_file", { path: "swap/secret.txt", old: SECRET, new: "pwned" }],
    ["list_dir", { path: "swap" }],
    ["glob", { pattern: "*", path: "swap" }],
    ["grep", { pattern: "secret", path: "swap" }],
  ] as const) {
    await mkdir(join(s.ws, "swap"), { recursive: true });
    const plan = await s.tools[tool]!.plan!(input, s.ctx);
    assert.ok(plan.paths[0]!.startsWith("swap"), JSON.stringify(plan));
    await rename(join(s.ws, "swap"), join(s.ws, `swapped-${tool}`));
    await symlink(s.outside, join(s.ws, "swap"));
    await assertRefused(s.tools[tool]!.run(input, s.ctx), `run of ${tool} after the swap`, s, input.path);
    await unlink(join(s.ws, "swap"));
  }
  await assertOutsideUntouched(s);
});

test("refuses /proc/self/fd of a file opened outside", async (t) => {
  const s = await sandbox(t);
  const handle = await open(join(s.outside, "secret.txt"), "r");
  t.after(() => handle.close());
  const path = `/proc/self/fd/${handle.fd}`;
  await assertRefused(s.tools.read_file!.plan!({ path }, s.ctx), "plan of read_file via /proc/self/fd", s, path);
  await assertRefused(s.tools.write_file!.run({ path, content: "pwned" }, s.ctx), "run of write_file via /proc/self/fd", s, path);
  await assertOutsideUntouched(s);
});

test("refuses glob and grep patterns that climb out of the search folder", async (t) => {
  const s = await sandbox(t);
  for (const [tool, input] of [
    ["glob", { pattern: "../outside/*" }],
    ["glob", { pattern: `${s.outside}/*` }],
    ["grep", { pattern: "secret", glob: "../**" }],
    ["grep", { pattern: "secret", glob: `${s.outside}/*` }],
  ] as const) {
    await assert.rejects(s.tools[tool]!.plan!(input, s.ctx), (err: unknown) => err instanceof ToolError && /must be relative/.test(err.message));
  }
  await assertOutsideUntouched(s);
});

test("a search of the workspace does not follow symlinks out of it", async (t) => {
  const s = await sandbox(t);
  await writeFile(join(s.ws, "src", "inside.txt"), "secret inside\n");
  const grep = await s.tools.grep!.run({ pattern: "secret" }, s.ctx);
  assert.equal(grep.content, "src/inside.txt:1:secret inside");
  const glob = await s.tools.glob!.run({ pattern: "**" }, s.ctx);
  assert.equal(glob.content, "src/inside.txt");
});
