import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { GLOB_MAX_RESULTS, globTool } from "../../../src/tools/search/glob.js";
import { tempDir } from "../../support/temp-dir.js";
import { VISIBLE_FILES, searchFixture } from "../search-fixture.js";
import { callTool, makeTree, searchBackends, textOf, toolContext, toolErrorOf } from "../tool-harness.js";

for (const backend of await searchBackends()) {
  const tool = globTool({ ripgrep: backend.choice });
  const glob = async (ws: string, input: unknown): Promise<string> => textOf(await callTool(tool, input, toolContext(ws)));

  test(`[${backend.name}] lists matching files sorted, honouring nested .gitignore files, .git left out`, async (t) => {
    const ws = await tempDir(t);
    await searchFixture(ws);
    assert.equal(await glob(ws, { pattern: "**/*" }), VISIBLE_FILES.join("\n"));
    assert.equal(await glob(ws, { pattern: "**/*.ts" }), "lib/local/y.ts\nsrc/.hidden.ts\nsrc/a.ts\nsrc/sub/c.ts");
    assert.equal(await glob(ws, { pattern: "src/*.{ts,tsx}" }), "src/.hidden.ts\nsrc/a.ts\nsrc/b.tsx");
    assert.equal(await glob(ws, { pattern: "*.log" }), "keep.log");
  });

  test(`[${backend.name}] matches the pattern below \`path\` and applies the .gitignore files above it`, async (t) => {
    const ws = await tempDir(t);
    await searchFixture(ws);
    assert.equal(await glob(ws, { pattern: "*", path: "src/sub" }), "src/sub/c.ts");
    assert.equal(await glob(ws, { pattern: "**/*.ts", path: "src" }), "src/.hidden.ts\nsrc/a.ts\nsrc/sub/c.ts");
    assert.equal(await glob(ws, { pattern: "**", path: "lib" }), "lib/build/z.js\nlib/local/y.ts");
  });

  test(`[${backend.name}] applies anchored rules and negations of the folders above \`path\``, async (t) => {
    const ws = await tempDir(t);
    await makeTree(ws, {
      ".gitignore": "*.tmp\n",
      "pkg/.gitignore": "/app/cache/\n/app/*.gen.js\n!/app/keep.gen.js\n",
      "pkg/app/.gitignore": "!local.tmp\n",
      "pkg/app/main.js": "", "pkg/app/x.gen.js": "", "pkg/app/keep.gen.js": "", "pkg/app/cache/c.js": "",
      "pkg/app/lib/cache/d.js": "", "pkg/app/lib/y.gen.js": "", "pkg/app/a.tmp": "", "pkg/app/local.tmp": "",
    });
    const expected = "pkg/app/.gitignore\npkg/app/keep.gen.js\npkg/app/lib/cache/d.js\npkg/app/lib/y.gen.js\npkg/app/local.tmp\npkg/app/main.js";
    assert.equal(await glob(ws, { pattern: "**", path: "pkg/app" }), expected);
    assert.equal(await glob(ws, { pattern: "*/**", path: "pkg" }), expected);
    assert.equal(await glob(ws, { pattern: "pkg/app/**" }), expected);
  });

  test(`[${backend.name}] searches an ignored folder when the path or the pattern names it`, async (t) => {
    const ws = await tempDir(t);
    await searchFixture(ws);
    assert.equal(await glob(ws, { pattern: "**/*.ts", path: "node_modules" }), "node_modules/m/index.ts");
    assert.equal(await glob(ws, { pattern: "node_modules/**/*.ts" }), "node_modules/m/index.ts");
    assert.equal(await glob(ws, { pattern: "**/index.ts" }), "No files match **/index.ts in the workspace.");
  });

  test(`[${backend.name}] does not follow symlinks`, async (t) => {
    const ws = await tempDir(t);
    await searchFixture(ws);
    assert.equal(await glob(ws, { pattern: "link*" }), "No files match link* in the workspace.");
    assert.equal(await glob(ws, { pattern: "linkdir/**" }), "No files match linkdir/** in the workspace.");
  });

  test(`[${backend.name}] caps the result with a note`, async (t) => {
    const ws = await tempDir(t);
    await makeTree(ws, Object.fromEntries(Array.from({ length: GLOB_MAX_RESULTS + 20 }, (_, i) => [`d/f${String(i).padStart(4, "0")}.txt`, ""])));
    const rows = (await glob(ws, { pattern: "**/*.txt" })).split("\n");
    assert.equal(rows.length, GLOB_MAX_RESULTS + 1);
    assert.equal(rows[0], "d/f0000.txt");
    assert.equal(rows.at(-1), `… 20 more files not shown (${GLOB_MAX_RESULTS + 20} in all); narrow the pattern or path`);
  });
}

test("refuses patterns that climb out or are absolute, and a path that is a file", async (t) => {
  const ws = await tempDir(t);
  await writeFile(join(ws, "a.txt"), "");
  const tool = globTool({ ripgrep: "js" });
  for (const pattern of ["../*", "src/../../x", "/etc/*"]) {
    assert.match(await toolErrorOf(callTool(tool, { pattern }, toolContext(ws))), /must be relative to `path`/);
  }
  assert.equal(await toolErrorOf(callTool(tool, { pattern: "*", path: "a.txt" }, toolContext(ws))), "`path` must be a folder; a.txt is a file");
  assert.equal(await toolErrorOf(callTool(tool, { pattern: "*", path: "nope" }, toolContext(ws))), "No such folder: nope");
  assert.deepEqual(await tool.plan!({ pattern: "*.ts", path: "src/.." }, toolContext(ws)), { paths: ["."] });
});
