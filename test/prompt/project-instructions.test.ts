/**
 * AGENTS.md is read only as a regular file inside the workspace, bounded before it is read: a
 * link to /proc/self/environ, to a device (a copy of /dev/zero made with mknod in a temp folder)
 * or out of the workspace, a FIFO and a folder are passed over — quickly, without blocking —
 * and a link that stays inside is followed. Through the agent, as the runner builds it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, open, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CodingAgent } from "../../src/agent.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { MAX_PROJECT_INSTRUCTIONS_BYTES } from "../../src/prompt/system-prompt.js";
import { readProjectInstructions } from "../../src/prompt/project-instructions.js";
import { tempDir } from "../support/temp-dir.js";

const systemOf = (workspace: string) => new CodingAgent(new ScriptedProvider([]), { workspace, builtinTools: false }).system()!;

test("AGENTS.md linking to /proc/self/environ, a device, a FIFO, a folder or a file outside the workspace is not read", async (t) => {
  const root = await tempDir(t);
  const workspace = join(root, "ws");
  await mkdir(workspace);
  await writeFile(join(root, "outside.md"), "SECRET OUTSIDE\n");
  execFileSync("mknod", [join(root, "zero"), "c", "1", "5"]);
  process.env.RHEMA_TEST_MARKER = "environ-must-not-leak";
  t.after(() => delete process.env.RHEMA_TEST_MARKER);
  const makers: [string, () => Promise<void>][] = [
    ["-> /proc/self/environ", () => symlink("/proc/self/environ", join(workspace, "AGENTS.md"))],
    ["-> a /dev/zero device node", () => symlink(join(root, "zero"), join(workspace, "AGENTS.md"))],
    ["a device node itself", async () => void execFileSync("mknod", [join(workspace, "AGENTS.md"), "c", "1", "5"])],
    ["a FIFO", async () => void execFileSync("mkfifo", [join(workspace, "AGENTS.md")])],
    ["a folder", () => mkdir(join(workspace, "AGENTS.md"))],
    ["-> ../outside.md", () => symlink("../outside.md", join(workspace, "AGENTS.md"))],
  ];
  for (const [what, make] of makers) {
    await make();
    const started = Date.now();
    const system = systemOf(workspace);
    assert.doesNotMatch(system, /Project instructions|environ-must-not-leak|PATH=|SECRET OUTSIDE/, `AGENTS.md ${what}`);
    assert.ok(Date.now() - started < 2000, `AGENTS.md ${what} is passed over at once`);
    execFileSync("rm", ["-rf", join(workspace, "AGENTS.md")]);
  }
});

test("AGENTS.md linking to a file inside the workspace is read; a huge one is read only up to the cap", async (t) => {
  const workspace = await tempDir(t);
  await mkdir(join(workspace, "docs"));
  await writeFile(join(workspace, "docs/agents.md"), "Use pnpm.\n");
  await symlink("docs/agents.md", join(workspace, "AGENTS.md"));
  assert.match(systemOf(workspace), /# Project instructions \(AGENTS\.md\)\nUse pnpm\./);
  execFileSync("rm", [join(workspace, "AGENTS.md")]);
  // 1 GiB, sparse: reading it whole would take seconds and a gigabyte of memory.
  const handle = await open(join(workspace, "AGENTS.md"), "w");
  await handle.write("Rule one.\n");
  await handle.truncate(1024 ** 3);
  await handle.close();
  const started = Date.now();
  const found = readProjectInstructions(workspace)!;
  assert.ok(Date.now() - started < 1000);
  assert.ok(found.text.startsWith("Rule one.\n"));
  assert.ok(found.text.endsWith(`[… cut at ${MAX_PROJECT_INSTRUCTIONS_BYTES} bytes of ${1024 ** 3}]`));
});
