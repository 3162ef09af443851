import assert from "node:assert/strict";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { canonicalize, isInsideWorkspace, resolveInWorkspace, toWorkspaceRelative } from "../../src/tools/workspace-scope.js";
import { tempDir } from "../support/temp-dir.js";
import { toolErrorOf } from "./tool-harness.js";

async function setup(t: Parameters<typeof tempDir>[0]): Promise<{ ws: string; outside: string }> {
  const base = await tempDir(t);
  const ws = join(base, "ws");
  const outside = join(base, "outside");
  await mkdir(join(ws, "src"), { recursive: true });
  await mkdir(outside);
  await writeFile(join(ws, "src", "a.ts"), "a");
  await writeFile(join(outside, "secret.txt"), "secret");
  return { ws, outside };
}

test("isInsideWorkspace accepts the root and paths below it, not a sibling sharing a prefix", () => {
  assert.equal(isInsideWorkspace("/w/ws", "/w/ws"), true);
  assert.equal(isInsideWorkspace("/w/ws", "/w/ws/a/b"), true);
  assert.equal(isInsideWorkspace("/w/ws", "/w/ws2/a"), false);
  assert.equal(isInsideWorkspace("/w/ws", "/w"), false);
  assert.equal(isInsideWorkspace("/w/ws", "pipe:[123]"), false);
});

test("toWorkspaceRelative gives '/'-separated paths and '.' for the root", () => {
  assert.equal(toWorkspaceRelative("/w/ws", "/w/ws"), ".");
  assert.equal(toWorkspaceRelative("/w/ws", "/w/ws/a/b.ts"), "a/b.ts");
});

test("resolves relative and absolute paths inside the workspace to canonical ones", async (t) => {
  const { ws } = await setup(t);
  assert.deepEqual(await resolveInWorkspace(ws, "src/a.ts"), { abs: join(ws, "src/a.ts"), rel: "src/a.ts" });
  assert.deepEqual(await resolveInWorkspace(ws, join(ws, "src")), { abs: join(ws, "src"), rel: "src" });
  assert.deepEqual(await resolveInWorkspace(ws, "./src/../."), { abs: ws, rel: "." });
});

test("resolves a path that does not exist yet below its deepest existing folder", async (t) => {
  const { ws } = await setup(t);
  await symlink("src", join(ws, "code"));
  assert.deepEqual(await resolveInWorkspace(ws, "code/new/deep/file.ts"), {
    abs: join(ws, "src/new/deep/file.ts"), rel: "src/new/deep/file.ts",
  });
});

test("follows a symlink inside the workspace to its target", async (t) => {
  const { ws } = await setup(t);
  await symlink(join(ws, "src", "a.ts"), join(ws, "link.ts"));
  assert.equal((await resolveInWorkspace(ws, "link.ts")).rel, "src/a.ts");
});

test("refuses '..' out of the workspace, naming the path and the workspace", async (t) => {
  const { ws } = await setup(t);
  const message = await toolErrorOf(resolveInWorkspace(ws, "../outside/secret.txt"));
  assert.match(message, /"\.\.\/outside\/secret\.txt" is outside the workspace/);
  assert.ok(message.includes(ws));
});

test("refuses an absolute path elsewhere", async (t) => {
  const { ws, outside } = await setup(t);
  await toolErrorOf(resolveInWorkspace(ws, join(outside, "secret.txt")));
  await toolErrorOf(resolveInWorkspace(ws, "/etc/passwd"));
});

test("refuses a symlink pointing outside, saying where it resolves", async (t) => {
  const { ws, outside } = await setup(t);
  await symlink(outside, join(ws, "out"));
  const message = await toolErrorOf(resolveInWorkspace(ws, "out/secret.txt"));
  assert.ok(message.includes(`it resolves to ${join(outside, "secret.txt")}`), message);
});

test("refuses a symlink chain pointing outside the workspace", async (t) => {
  const { ws, outside } = await setup(t);
  await symlink(outside, join(ws, "hop3"));
  await symlink("hop3", join(ws, "hop2"));
  await symlink("../hop2", join(ws, "src", "hop1"));
  await toolErrorOf(resolveInWorkspace(ws, "src/hop1/secret.txt"));
});

test("refuses a dangling symlink whose target would be created outside", async (t) => {
  const { ws, outside } = await setup(t);
  await symlink(join(outside, "not-yet", "file.txt"), join(ws, "dangling"));
  await toolErrorOf(resolveInWorkspace(ws, "dangling"));
  await symlink(join(outside, "missing-dir"), join(ws, "dangling-dir"));
  await toolErrorOf(resolveInWorkspace(ws, "dangling-dir/new.txt"));
});

test("refuses /proc/self tricks that lead outside", async (t) => {
  const { ws } = await setup(t);
  await toolErrorOf(resolveInWorkspace(ws, "/proc/self/root/etc/passwd"));
  await toolErrorOf(resolveInWorkspace(ws, "/proc/self/cwd/x"));
  await toolErrorOf(resolveInWorkspace(ws, "/proc/self/fd/0"));
});

test("refuses a symlink loop with a ToolError", async (t) => {
  const { ws } = await setup(t);
  await symlink("loop-b", join(ws, "loop-a"));
  await symlink("loop-a", join(ws, "loop-b"));
  const message = await toolErrorOf(resolveInWorkspace(ws, "loop-a/x"));
  assert.match(message, /too many levels of symbolic links|outside the workspace/);
});

test("refuses empty paths and NUL bytes, naming the field", async (t) => {
  const { ws } = await setup(t);
  assert.equal(await toolErrorOf(resolveInWorkspace(ws, "", "path")), "`path` is empty");
  assert.equal(await toolErrorOf(resolveInWorkspace(ws, "a\0b", "path")), "`path` contains a NUL byte");
});

test("canonicalize leaves a path with no existing ancestor but '/' as it is", async () => {
  assert.equal(await canonicalize("/definitely-not-here-rhema/x/y"), "/definitely-not-here-rhema/x/y");
});
