/**
 * Resolving the paths a command names: against every directory it may `cd` into, through
 * symlinks component by component (so `link/..` goes where the kernel goes), dangling links
 * followed, devices recognised, and "unknown" after an unknowable `cd`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, realpath, symlink } from "node:fs/promises";
import { join } from "node:path";
import { loadBashParser } from "../../../src/policy/shell/grammar/bash-parser.js";
import { analyzeShell } from "../../../src/policy/shell/shell-analysis.js";
import { argumentPathTexts, resolveShellPaths, resolveShellPathsLexically } from "../../../src/policy/shell/shell-paths.js";
import { literalWord } from "../../../src/policy/shell/grammar/shell-words.js";
import { tempDir } from "../../support/temp-dir.js";

/** Outcomes by path text (the directory-set part of each key dropped; the last one wins). */
function byText(paths: ReadonlyMap<string, unknown>): Record<string, unknown> {
  return Object.fromEntries([...paths].map(([key, outcomes]) => [key.slice(key.indexOf("\n") + 1), outcomes]));
}

async function lexical(command: string, ws = "/ws") {
  return byText(resolveShellPathsLexically(analyzeShell(command, await loadBashParser()), ws).paths);
}

test("paths resolve against every directory the command may run in, by text when no file system is at hand", async () => {
  // "." is each command's own directory.
  assert.deepEqual(await lexical("echo x > a"), { ".": [{ kind: "inside", path: "." }], x: [{ kind: "inside", path: "x" }], a: [{ kind: "inside", path: "a" }] });
  assert.deepEqual((await lexical("cd src && ls > a"))["a"], [{ kind: "inside", path: "src/a" }]);
  assert.deepEqual((await lexical("cd src; ls > a"))["a"], [{ kind: "inside", path: "src/a" }, { kind: "inside", path: "a" }]);
  assert.deepEqual((await lexical("cd .. && ls > a"))["a"], [{ kind: "outside", path: "/a" }]);
  assert.deepEqual((await lexical("go test ./..."))["./..."], [{ kind: "inside", path: "..." }], "`...` is a name, not `..`");
  assert.deepEqual((await lexical("ls > /ws/src/a"))["/ws/src/a"], [{ kind: "inside", path: "src/a" }]);
  assert.deepEqual((await lexical("ls > /wsx/a"))["/wsx/a"], [{ kind: "outside", path: "/wsx/a" }]);
  assert.deepEqual((await lexical("ls > ~/a"))["~/a"], [{ kind: "outside", path: "~/a" }]);
  assert.deepEqual((await lexical("ls > /dev/null 2> /dev/stderr"))["/dev/null"], [{ kind: "device" }]);
  assert.deepEqual((await lexical("cd $D; ls > a"))["a"], [{ kind: "inside", path: "a" }, { kind: "unknown" }]);
  assert.deepEqual((await lexical("cat < /dev/tcp/example.com/80"))["/dev/tcp/example.com/80"], [{ kind: "network", path: "/dev/tcp/example.com/80" }]);
  assert.deepEqual((await lexical("ls > ."))["."], [{ kind: "inside", path: "." }]);
});

test("argument texts are operands and --option=value values", () => {
  const argv = ["git", "diff", "--output=out.txt", "-p", "src", "--", "", "-x"].map(literalWord);
  assert.deepEqual(argumentPathTexts(argv), ["diff", "out.txt", "src"]);
});

test("through the file system, symlinks are followed one component at a time", async (t) => {
  const root = await tempDir(t);
  const ws = join(root, "ws");
  await mkdir(join(ws, "real", "deep"), { recursive: true });
  await mkdir(join(root, "elsewhere"));
  await symlink(join(ws, "real", "deep"), join(ws, "link"));
  await symlink(join(root, "elsewhere"), join(ws, "out"));
  await symlink(join(root, "elsewhere", "missing"), join(ws, "dangling"));
  await symlink("dangling", join(ws, "chain"));
  const canonical = await realpath(ws);
  const parser = await loadBashParser();
  const resolve = async (target: string) =>
    byText((await resolveShellPaths(analyzeShell(`ls > ${target}`, parser), canonical)).paths)[target];
  assert.deepEqual(await resolve("link/x"), [{ kind: "inside", path: "real/deep/x" }]);
  assert.deepEqual(await resolve("link/../x"), [{ kind: "inside", path: "real/x" }], "`..` after a link climbs from where the link points");
  assert.deepEqual(await resolve("out/x"), [{ kind: "outside", path: join(await realpath(root), "elsewhere", "x") }]);
  assert.deepEqual(await resolve("dangling"), [{ kind: "outside", path: join(await realpath(root), "elsewhere", "missing") }]);
  assert.deepEqual(await resolve("chain"), [{ kind: "outside", path: join(await realpath(root), "elsewhere", "missing") }]);
  assert.deepEqual(await resolve("new/dir/file"), [{ kind: "inside", path: "new/dir/file" }]);
  const viaCd = await resolveShellPaths(analyzeShell("cd link; ls > y", parser), canonical);
  assert.deepEqual(byText(viaCd.paths)["y"], [{ kind: "inside", path: "real/deep/y" }, { kind: "inside", path: "y" }]);
});
