import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { CancelledError } from "../../../src/core/errors.js";
import { GREP_MAX_BYTES, GREP_MAX_MATCHES, grepTool, parseRipgrepLine } from "../../../src/tools/search/grep.js";
import { tempDir } from "../../support/temp-dir.js";
import { searchFixture } from "../search-fixture.js";
import { callTool, makeTree, searchBackends, textOf, toolContext, toolErrorOf } from "../tool-harness.js";

const ALL_NEEDLES = [
  ".github/workflows/ci.yml:1:run: needle",
  "keep.log:1:needle keep",
  "lib/build/z.js:1:needle lib build",
  "lib/local/y.ts:1:needle lib local",
  "src/.hidden.ts:1:needle hidden",
  "src/a.ts:1:export const needle = 1;",
  "src/sub/c.ts:3:needle",
];

for (const backend of await searchBackends()) {
  const tool = grepTool({ ripgrep: backend.choice });
  const grep = async (ws: string, input: unknown): Promise<string> => textOf(await callTool(tool, input, toolContext(ws)));

  test(`[${backend.name}] prints file:line:text sorted, skipping ignored, binary and .git files`, async (t) => {
    const ws = await tempDir(t);
    await searchFixture(ws);
    assert.equal(await grep(ws, { pattern: "needle" }), ALL_NEEDLES.join("\n"));
    assert.equal(await grep(ws, { pattern: "n[e]+dle\\s+h" }), "src/.hidden.ts:1:needle hidden");
  });

  test(`[${backend.name}] ignoreCase, context and "--" between runs`, async (t) => {
    const ws = await tempDir(t);
    await searchFixture(ws);
    assert.equal(await grep(ws, { pattern: "NEEDLE IN", ignoreCase: true }), "src/b.tsx:1:// Needle in caps");
    assert.equal(await grep(ws, { pattern: "NEEDLE IN" }), "No matches for NEEDLE IN in the workspace.");
    assert.equal(await grep(ws, { pattern: "needle", path: "src/sub", context: 1 }), "src/sub/c.ts-2-b\nsrc/sub/c.ts:3:needle\nsrc/sub/c.ts-4-c");
    await writeFile(join(ws, "ctx.txt"), "a\nhit\nb\nc\nd\ne\nhit\nf\nhit\n");
    assert.equal(
      await grep(ws, { pattern: "hit", path: "ctx.txt", context: 1 }),
      "ctx.txt-1-a\nctx.txt:2:hit\nctx.txt-3-b\n--\nctx.txt-6-e\nctx.txt:7:hit\nctx.txt-8-f\nctx.txt:9:hit",
    );
  });

  test(`[${backend.name}] glob filters by file name, or by path below \`path\``, async (t) => {
    const ws = await tempDir(t);
    await searchFixture(ws);
    const ts = ALL_NEEDLES.filter((l) => /^[^:]+\.ts:/.test(l));
    assert.equal(await grep(ws, { pattern: "needle", glob: "*.ts" }), ts.join("\n"));
    assert.equal(await grep(ws, { pattern: "needle", glob: "*.{yml,js}" }), `${ALL_NEEDLES[0]}\n${ALL_NEEDLES[2]}`);
    assert.equal(await grep(ws, { pattern: "needle", glob: "sub/*.ts", path: "src" }), "src/sub/c.ts:3:needle");
    assert.equal(await grep(ws, { pattern: "needle", glob: "src/**" }), ALL_NEEDLES.slice(4).join("\n"));
  });

  test(`[${backend.name}] searches a file named by path even when ignored; a binary one is not searched`, async (t) => {
    const ws = await tempDir(t);
    await searchFixture(ws);
    assert.equal(await grep(ws, { pattern: "needle", path: "src/generated.ts" }), "src/generated.ts:1:needle generated");
    assert.equal(await grep(ws, { pattern: "needle", path: "node_modules" }), "node_modules/m/index.ts:1:needle module");
    assert.equal(await grep(ws, { pattern: "needle", path: "bin/tool" }), "bin/tool is a binary file; not searched.");
  });

  test(`[${backend.name}] caps matches at ${GREP_MAX_MATCHES}, keeping the first in path order, with a note`, async (t) => {
    const ws = await tempDir(t);
    const files: Record<string, string> = {};
    for (let i = 0; i < 150; i++) files[`f/${String(i).padStart(3, "0")}.txt`] = "hit one\nmiss\nhit two\n";
    await makeTree(ws, files);
    const rows = (await grep(ws, { pattern: "hit" })).split("\n");
    assert.equal(rows.length, GREP_MAX_MATCHES + 1);
    assert.equal(rows[0], "f/000.txt:1:hit one");
    assert.equal(rows[GREP_MAX_MATCHES - 1], "f/099.txt:3:hit two");
    assert.equal(rows.at(-1), "… 100 more matches not shown (300 matches in 150 files); narrow the pattern, path or glob to see the rest");
  });

  test(`[${backend.name}] caps output bytes and cuts long lines`, async (t) => {
    const ws = await tempDir(t);
    await writeFile(join(ws, "wide.txt"), Array.from({ length: 190 }, (_, i) => `hit ${i} ${"x".repeat(400)}`).join("\n"));
    const text = await grep(ws, { pattern: "hit" });
    assert.ok(Buffer.byteLength(text) <= GREP_MAX_BYTES + 300, `${Buffer.byteLength(text)} bytes`);
    const rows = text.split("\n");
    assert.equal(rows[0], `wide.txt:1:hit 0 ${"x".repeat(294)}… [line cut]`);
    assert.match(rows.at(-1)!, /^… \d+ more matches not shown \(190 matches in 1 files\)/);
  });

  test(`[${backend.name}] an invalid pattern is an error for the model`, async (t) => {
    const ws = await tempDir(t);
    await writeFile(join(ws, "a.txt"), "x\n");
    assert.match(await toolErrorOf(callTool(tool, { pattern: "(unclosed" }, toolContext(ws))), /regular expression|regex parse error/);
  });

  test(`[${backend.name}] a cancelled search throws`, async (t) => {
    const ws = await tempDir(t);
    await searchFixture(ws);
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(tool.run({ pattern: "needle" }, toolContext(ws, { signal: controller.signal })), CancelledError);
  });
}

test("input errors name the field", async (t) => {
  const ws = await tempDir(t);
  const tool = grepTool({ ripgrep: "js" });
  assert.equal(await toolErrorOf(callTool(tool, { pattern: "" }, toolContext(ws))), "`pattern` is empty");
  assert.equal(await toolErrorOf(callTool(tool, { pattern: "a", context: 11 }, toolContext(ws))), "Invalid input for `grep`: `context` must be an integer from 0 to 10 (got 11)");
  assert.match(await toolErrorOf(callTool(tool, { pattern: "a", glob: "../*" }, toolContext(ws))), /^`glob` must be relative/);
  assert.equal(await toolErrorOf(callTool(tool, { pattern: "a", path: "nope" }, toolContext(ws))), "No such file or folder: nope");
});

test("parseRipgrepLine reads matches and context lines, and skips separators", () => {
  assert.deepEqual(parseRipgrepLine("./a:b.ts\u000012:x: y"), { path: "a:b.ts", line: { line: 12, match: true, text: "x: y" } });
  assert.deepEqual(parseRipgrepLine("src/a.ts\u00003-ctx"), { path: "src/a.ts", line: { line: 3, match: false, text: "ctx" } });
  assert.equal(parseRipgrepLine("--"), null);
});
