/** Shared helpers for the tool tests: a context, calling a tool the way the engine does, trees. */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ToolError } from "../../src/core/errors.js";
import type { Tool, ToolContext, ToolResult } from "../../src/core/tool.js";
import { bundledRipgrep, ripgrepMajorVersion, type RipgrepChoice } from "../../src/tools/search/ripgrep.js";

export function toolContext(workspace: string, extra: Partial<ToolContext> = {}): ToolContext {
  return { workspace, signal: new AbortController().signal, ...extra };
}

/** plan, then run: what the engine does (approval aside). */
export async function callTool(tool: Tool, input: unknown, ctx: ToolContext): Promise<ToolResult> {
  await tool.plan?.(input, ctx);
  return tool.run(input, ctx);
}

/** The text of a result whose content is a string. */
export function textOf(result: ToolResult): string {
  assert.equal(typeof result.content, "string", "expected text content");
  return result.content as string;
}

/** Awaits a promise that must reject with a ToolError; returns its message. */
export async function toolErrorOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ToolError, `expected a ToolError, got ${String(err)}`);
    return err.message;
  }
  assert.fail("expected a ToolError, the call succeeded");
}

/** Writes the files of `tree` (relative path → content) below `root`. */
export async function makeTree(root: string, tree: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, content] of Object.entries(tree)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), content);
  }
}

/** The search backends available here: JavaScript, the bundled rg, and rg on PATH when present. */
export async function searchBackends(): Promise<Array<{ name: string; choice: RipgrepChoice }>> {
  const backends: Array<{ name: string; choice: RipgrepChoice }> = [{ name: "js", choice: "js" }];
  const bundled = await bundledRipgrep();
  if (bundled) backends.push({ name: "bundled rg", choice: { binary: bundled } });
  if (((await ripgrepMajorVersion("rg")) ?? 0) >= 13) backends.push({ name: "PATH rg", choice: { binary: "rg" } });
  return backends;
}
