/**
 * Links and special files in fixtures, through the built CLI: a task's workspace is a world of
 * its own. `workspace.from` that is a link is copied as the folder it names (the task's writes
 * never reach the user's fixture); FIFOs, sockets, devices, links that lead out of the fixture
 * (absolute, climbing, to /proc or /dev), a path that grows past PATH_MAX in the copy and the
 * run directory inside the fixture are exit 2 naming the entry, before anything is written;
 * links that stay inside are copied as links; a sparse file stays sparse. Special files are
 * made with mknod/mkfifo in temp folders only.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { lstat, mkdir, open, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../support/cli.js";
import { tempDir } from "../support/temp-dir.js";

const POLICY = "version: 1\ndefault: allow\nrules:\n  - deny: { shell: [\"git push *\"] }\n";

/** A project with one scripted task copying `fixture-link` (a link to `fixture/`) that writes a.txt and appends to b.txt with the shell. */
async function project(root: string, from = "../../fixture-link"): Promise<void> {
  await mkdir(join(root, "tasks/s"), { recursive: true });
  await mkdir(join(root, "fixture"), { recursive: true });
  await writeFile(join(root, "fixture/a.txt"), "original\n");
  await writeFile(join(root, "fixture/b.txt"), "original\n");
  await writeFile(join(root, "policy.yaml"), POLICY);
  await symlink("fixture", join(root, "fixture-link"));
  await writeFile(join(root, "tasks/s/t.yaml"), `prompt: Change the files.
policy: ../../policy.yaml
workspace: { from: ${from} }
model:
  provider: scripted
  script:
    - call: write_file
      input: { path: a.txt, content: "changed by the task\\n" }
    - call: shell
      input: { command: "echo appended >> b.txt" }
    - say: done
`);
}

// Copies, whose trees these tests read after the run (a layered workspace is unmounted by then:
// workspace-layers.e2e.test.ts shows links and sparse files over a layer).
const run = (root: string, out = "out", ...extra: string[]) =>
  runCli(["run", "tasks", "--out", out, "--sandbox", "off", "--workspace-layers", "copy", ...extra], { cwd: root, env: cliEnv() });

/** Exit 2 naming `name`, no stack trace, no "run the same command" (which never helps here), and nothing written. */
function assertRefused(result: { code: number | null; stderr: string }, name: RegExp, root: string): void {
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, name);
  assert.doesNotMatch(result.stderr, /run the same command|\n\s+at /);
  assert.equal(existsSync(join(root, "out")), false, "nothing is written before the refusal");
}

test("a workspace.from that is a link is copied as the folder it names: the task's write_file and shell never touch the user's fixture", async (t) => {
  const root = await tempDir(t);
  await project(root);
  const result = await run(root);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(await readFile(join(root, "fixture/a.txt"), "utf8"), "original\n");
  assert.equal(await readFile(join(root, "fixture/b.txt"), "utf8"), "original\n");
  const workspace = join(root, "out/tasks/s/t/default/1/workspace");
  assert.ok((await lstat(workspace)).isDirectory(), "the workspace is a folder of its own, not a link");
  assert.equal(await readFile(join(workspace, "a.txt"), "utf8"), "changed by the task\n");
  assert.equal(await readFile(join(workspace, "b.txt"), "utf8"), "original\nappended\n");
});

test("FIFOs, sockets and devices in a fixture are exit 2 naming the file, at validate and at run (copied or layered), before anything is written", async (t) => {
  const root = await tempDir(t);
  await project(root);
  const fixture = join(root, "fixture");
  await mkdir(join(fixture, "deep/er"), { recursive: true });
  const kinds: [string, () => Promise<void>, RegExp][] = [
    ["deep/er/pipe", async () => void execFileSync("mkfifo", [join(fixture, "deep/er/pipe")]), /deep\/er\/pipe is a FIFO/],
    ["sock", async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(join(fixture, "sock"), resolve));
      t.after(() => server.close());
    }, /sock is a socket/],
    // Only root may make a device node (CAP_MKNOD): as another user the FIFO and the socket stand for the class.
    ...(process.getuid?.() === 0 ? [["null", async () => void execFileSync("mknod", [join(fixture, "null"), "c", "1", "3"]), /null is a character device/] as [string, () => Promise<void>, RegExp]] : []),
  ];
  if (process.getuid?.() !== 0) t.diagnostic("not root: no device node made (mknod needs CAP_MKNOD)");
  for (const [name, make, message] of kinds) {
    await make();
    const validate = await runCli(["validate", "tasks"], { cwd: root, env: cliEnv() });
    assert.equal(validate.code, 2, validate.stderr);
    assert.match(validate.stderr, message);
    assert.match(validate.stderr, /t\.yaml:3:\d+: workspace\.from: /);
    assertRefused(await run(root), message, root);
    // Layered (as root: an overlay over the base prepared from the fixture), refused the same, before any base or mount.
    assertRefused(await runCli(["run", "tasks", "--out", "out", "--sandbox", "off", "--workspace-layers", "auto"], { cwd: root, env: cliEnv() }), message, root);
    execFileSync("rm", ["-f", join(fixture, name)]);
  }
});

test("links leading out of a fixture — absolute, climbing, to /proc and /dev, through another link — are exit 2 naming the link; links inside are copied as links", async (t) => {
  const root = await tempDir(t);
  await project(root);
  const fixture = join(root, "fixture");
  await writeFile(join(root, "secret.txt"), "outside\n");
  await mkdir(join(fixture, "sub/deeper"), { recursive: true });
  await symlink("../..", join(fixture, "sub/deeper/up")); // resolves to fixture/: inside
  const outward: [string, string, RegExp][] = [
    ["AGENTS.md", "/proc/self/environ", /AGENTS\.md is a link to the absolute path \/proc\/self\/environ/],
    ["zero", "/dev/zero", /zero is a link to the absolute path \/dev\/zero/],
    ["abs", join(fixture, "a.txt"), /abs is a link to the absolute path/],
    ["climb", "../secret.txt", /climb is a link leading out of the fixture \(to .*secret\.txt\)/],
    // Lexically fixture/sub/deeper/up/.. = fixture/sub/deeper; the kernel takes `..` after `up` resolved: the fixture's parent.
    ["sneak", "sub/deeper/up/../secret.txt", /sneak is a link leading out of the fixture/],
  ];
  for (const [name, target, message] of outward) {
    await symlink(target, join(fixture, name));
    assertRefused(await run(root), message, root);
    // Layered (as root: an overlay over the base prepared from the fixture), refused the same, before any base or mount.
    assertRefused(await runCli(["run", "tasks", "--out", "out", "--sandbox", "off", "--workspace-layers", "auto"], { cwd: root, env: cliEnv() }), message, root);
    execFileSync("rm", ["-f", join(fixture, name)]);
  }
  await symlink("a.txt", join(fixture, "alias"));
  await symlink("sub/deeper/up/b.txt", join(fixture, "via-link"));
  const result = await run(root);
  assert.equal(result.code, 0, result.stderr);
  const workspace = join(root, "out/tasks/s/t/default/1/workspace");
  assert.equal(await readlink(join(workspace, "alias")), "a.txt");
  assert.equal(await readFile(join(workspace, "alias"), "utf8"), "changed by the task\n", "the link leads to the copy's file");
  assert.equal(await readFile(join(workspace, "via-link"), "utf8"), "original\nappended\n");
});

test("a fixture path that grows past PATH_MAX in the copy, and a run directory inside the fixture, are exit 2 naming them", async (t) => {
  const root = await tempDir(t);
  await project(root);
  const fixture = join(root, "fixture");
  // An entry that fits where it is, but not below the run directory's longer prefix.
  const longOut = join(root, "o".repeat(200));
  const room = 4095 - Buffer.byteLength(fixture) - 1;
  const segments: string[] = [];
  let used = 0;
  while (used + 201 <= room - 10) {
    segments.push("d".repeat(200));
    used += 201;
  }
  const deep = join(fixture, ...segments);
  execFileSync("mkdir", ["-p", deep.slice(fixture.length + 1)], { cwd: fixture });
  const result = await run(root, longOut);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /d{200} would be \d+ bytes long as copied .*over the 4096-byte PATH_MAX/);
  assert.equal(existsSync(longOut), false);
  execFileSync("rm", ["-rf", segments[0]!], { cwd: fixture });

  const inside = await run(root, "fixture/runs");
  assert.equal(inside.code, 2, inside.stderr);
  assert.match(inside.stderr, /workspace\.from .*fixture-link holds the run directory .*fixture\/runs/);
  assert.equal(existsSync(join(fixture, "runs")), false);
});

test("a sparse file stays sparse in the task's copy: a 2 GiB file holding 4 KiB takes a few blocks, not 2 GiB", async (t) => {
  const root = await tempDir(t);
  await project(root);
  // Left out of the changes snapshot, whose git would read the 2 GiB, holes as zeros (~26 s here):
  // the copy is what this shows, and what `changes.exclude` leaves out is never read.
  const taskFile = join(root, "tasks/s/t.yaml");
  await writeFile(taskFile, (await readFile(taskFile, "utf8")).replace("workspace: { from: ../../fixture-link }", "workspace: { from: ../../fixture-link, changes: { exclude: [sparse.bin] } }"));
  assert.match(await readFile(taskFile, "utf8"), /exclude: \[sparse\.bin\]/);
  const sparse = join(root, "fixture/sparse.bin");
  const handle = await open(sparse, "w");
  await handle.write(Buffer.alloc(4096, 7), 0, 4096, 1024 * 1024);
  await handle.truncate(2 * 1024 ** 3);
  await handle.close();
  const source = await stat(sparse);
  assert.ok(source.blocks * 512 < 1024 * 1024, `the source is sparse (${source.blocks} blocks)`);
  const started = Date.now();
  const result = await run(root);
  assert.equal(result.code, 0, result.stderr);
  const copy = await stat(join(root, "out/tasks/s/t/default/1/workspace/sparse.bin"));
  assert.equal(copy.size, source.size);
  assert.ok(copy.blocks <= source.blocks + 16, `the copy keeps its holes: ${copy.blocks} blocks (source ${source.blocks})`);
  const bytes = Buffer.alloc(4096);
  const read = await open(join(root, "out/tasks/s/t/default/1/workspace/sparse.bin"), "r");
  await read.read(bytes, 0, 4096, 1024 * 1024);
  await read.close();
  assert.ok(bytes.equals(Buffer.alloc(4096, 7)), "the data block is copied");
  t.diagnostic(`sparse copy: ${copy.blocks} blocks of 512 bytes for ${copy.size} bytes; run took ${Date.now() - started} ms`);
});
