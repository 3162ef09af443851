/**
 * Every cookbook policy in the docs (a ```yaml cookbook block) is tried through the built
 * `rhema policy check`: each row of the table under it (tool, input, decision) must be decided as
 * the table says, and the policy must load without warnings. A cookbook entry without rows, or
 * a table naming a tool the test cannot build input for, fails: nothing in the cookbook goes untried.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { cliEnv, runCli } from "../support/cli.js";
import { type FencedBlock, docFiles, fencedBlocks, readDoc, tableRows } from "../support/doc-blocks.js";
import { tempDir } from "../support/temp-dir.js";

function cookbookBlocks(): FencedBlock[] {
  return docFiles().flatMap((file) => fencedBlocks(file, readDoc(file))).filter((b) => b.lang === "yaml" && b.marks.includes("cookbook"));
}

/** The tool input a table row names: a command for `shell`, a path for the file tools. */
function toolInput(tool: string, cell: string): Record<string, string> {
  const text = /^`(.*)`$/.exec(cell)?.[1];
  if (text === undefined) throw new Error(`the input cell ${cell} is not one code span`);
  switch (tool) {
    case "shell": return { command: text };
    case "write_file": return { path: text, content: "x\n" };
    case "read_file": return { path: text };
    default: throw new Error(`no input form for tool ${tool}: add one to this test`);
  }
}

test("the docs hold the cookbook: Node, Python, Go and a monorepo", () => {
  const blocks = cookbookBlocks();
  assert.ok(blocks.length >= 4, `found ${blocks.length} cookbook policies`);
});

for (const block of cookbookBlocks()) {
  test(`the cookbook policy at ${block.file}:${block.line} decides as its table says`, async (t) => {
    const rows = tableRows(block.after);
    assert.ok(rows.length >= 4, "a cookbook policy needs a table of calls under it (| tool | input | decision |)");
    assert.ok(rows.some((r) => r[2] === "allow") && rows.some((r) => r[2] === "deny"), "the table shows calls allowed and calls denied");
    const dir = await tempDir(t);
    const workspace = join(dir, "workspace");
    await mkdir(workspace);
    const policy = join(dir, "policy.yaml");
    await writeFile(policy, block.body + "\n");
    const wrong: string[] = [];
    for (const [tool = "", cell = "", expected = ""] of rows) {
      assert.ok(expected === "allow" || expected === "deny", `decision ${expected} is allow or deny`);
      const input = JSON.stringify(toolInput(tool, cell));
      const r = await runCli(["policy", "check", "--policy", policy, "--tool", tool, "--input", input, "--workspace", workspace, "--json"], { cwd: dir, env: cliEnv() });
      assert.equal(r.stderr, "", `the cookbook policy loads without warnings or errors (${tool} ${cell})`);
      const out = JSON.parse(r.stdout) as { decision?: string; rule?: string; reason?: string; error?: string };
      assert.equal(out.error, undefined, `${tool} ${cell}: ${out.error}`);
      assert.equal(r.code, out.decision === "allow" ? 0 : 1);
      if (out.decision !== expected) wrong.push(`${tool} ${cell}: expected ${expected}, got ${out.decision} by ${out.rule}: ${out.reason}`);
    }
    assert.deepEqual(wrong, [], `${block.file}:${block.line}: the policy decides otherwise than its table says`);
  });
}
