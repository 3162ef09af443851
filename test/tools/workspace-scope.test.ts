import assert from "node:assert/strict";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { canonicalize, isInsideWorkspace, resolveInWorkspace, toWorkspaceRelative } from "../../src/tools/workspace-scope.js";
import { tempDir } from "../support/temp-dir.js";
import { toolErrorOf } from "./tool-harness.js";

/**
 * Awaits the refusal of a path outside the workspace and checks it is exactly that refusal: a
 * ToolError naming the path and the workspace and, when links were followed, where the path
 * resolves (`resolvesTo`; null when it resolves to itself, "somewhere" when it cannot be known).
 */
async function assertOutside(promise: Promise<unknown>, ws: string, path: string, resolvesTo: string | null): Promise<void> {
  const message = await toolErrorOf(promise);
  const head = `Path "${path}" is outside the workspace ${ws}`;
  const tail = ". Tools can only use paths inside the workspace.";
  if (resolvesTo === "somewhere") {
    assert.ok(message.startsWith(`${head} (it resolves to `) && message.endsWith(`)${tail}`), message);
  } else {
    assert.equal(message, `${head}${resolvesTo === null ? "" : ` (it resolves to ${resolvesTo})`}${tail}`);
  }
}

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
  await assertOutside(resolveInWorkspace(ws, "../outside/secret.txt"), ws, "../outside/secret.txt", null);
});

test("refuses an absolute path elsewhere", async (t) => {
  const { ws, outside } = await setup(t);
  await assertOutside(resolveInWorkspace(ws, join(outside, "secret.txt")), ws, join(outside, "secret.txt"), null);
  await assertOutside(resolveInWorkspace(ws, "/etc/passwd"), ws, "/etc/passwd", null);
});

test("refuses a symlink pointing outside, saying where it resolves", async (t) => {
  const { ws, outside } = await setup(t);
  await symlink(outside, join(ws, "out"));
  await assertOutside(resolveInWorkspace(ws, "out/secret.txt"), ws, "out/secret.txt", join(outside, "secret.txt"));
});

test("refuses a symlink chain pointing outside the workspace", async (t) => {
  const { ws, outside } = await setup(t);
  await symlink(outside, join(ws, "hop3"));
  await symlink("hop3", join(ws, "hop2"));
  await symlink("../hop2", join(ws, "src", "hop1"));
  await assertOutside(resolveInWorkspace(ws, "src/hop1/secret.txt"), ws, "src/hop1/secret.txt", join(outside, "secret.txt"));
});

test("refuses a dangling symlink whose target would be created outside", async (t) => {
  const { ws, outside } = await setup(t);
  await symlink(join(outside, "not-yet", "file.txt"), join(ws, "dangling"));
  await assertOutside(resolveInWorkspace(ws, "dangling"), ws, "dangling", join(outside, "not-yet", "file.txt"));
  await symlink(join(outside, "missing-dir"), join(ws, "dangling-dir"));
  await assertOutside(resolveInWorkspace(ws, "dangling-dir/new.txt"), ws, "dangling-dir/new.txt", join(outside, "missing-dir", "new.txt"));
});

test("refuses /proc/self tricks that lead outside", async (t) => {
  const { ws } = await setup(t);
  await assertOutside(resolveInWorkspace(ws, "/proc/self/root/etc/passwd"), ws, "/proc/self/root/etc/passwd", "/etc/passwd");
  await assertOutside(resolveInWorkspace(ws, "/proc/self/cwd/x"), ws, "/proc/self/cwd/x", join(process.cwd(), "x"));
  // fd 0 is whatever the test runner gave this process: /dev/null, a pipe, a terminal.
  await assertOutside(resolveInWorkspace(ws, "/proc/self/fd/0"), ws, "/proc/self/fd/0", "somewhere");
});

test("refuses a symlink loop with a ToolError naming the path", async (t) => {
  const { ws } = await setup(t);
  await symlink("loop-b", join(ws, "loop-a"));
  await symlink("loop-a", join(ws, "loop-b"));
  assert.equal(await toolErrorOf(resolveInWorkspace(ws, "loop-a/x")), `${join(ws, "loop-a/x")}: too many levels of symbolic links`);
});

test("refuses empty paths and NUL bytes, naming the field", async (t) => {
  const { ws } = await setup(t);
  assert.equal(await toolErrorOf(resolveInWorkspace(ws, "", "path")), "`path` is empty");
  assert.equal(await toolErrorOf(resolveInWorkspace(ws, "a\0b", "path")), "`path` contains a NUL byte");
});

test("canonicalize leaves a path with no existing ancestor but '/' as it is", async () => {
  assert.equal(await canonicalize("/definitely-not-here-rhema/x/y"), "/definitely-not-here-rhema/x/y");
});
