/** Shared helpers for the tool tests: a context, calling a tool the way the engine does, trees. */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ToolError } from "../../src/core/errors.js";
import type { Tool, ToolContext, ToolPlan, ToolResult } from "../../src/core/tool.js";
import { compileInputChecks } from "../../src/core/tool-input/tool-input-check.js";
import { bundledRipgrep, ripgrepMajorVersion, type RipgrepChoice } from "../../src/tools/search/ripgrep.js";

export function toolContext(workspace: string, extra: Partial<ToolContext> = {}): ToolContext {
  return { workspace, signal: new AbortController().signal, ...extra };
}

/**
 * Check the input against the tool's schema, plan, then run: what the engine does (approval
 * aside). Input that does not match rejects with a ToolError carrying the text the model reads.
 */
export async function callTool(tool: Tool, input: unknown, ctx: ToolContext): Promise<ToolResult> {
  const checked = checkedInput(tool, input);
  await tool.plan?.(checked, ctx);
  return tool.run(checked, ctx);
}

/** Check the input against the tool's schema, then plan. */
export async function planTool(tool: Tool, input: unknown, ctx: ToolContext): Promise<ToolPlan> {
  assert.ok(tool.plan, `${tool.spec.name} has no plan`);
  return tool.plan(checkedInput(tool, input), ctx);
}

/** The input as the engine hands it to the tool, or a ToolError with the text the model reads. */
function checkedInput(tool: Tool, input: unknown): unknown {
  const checked = compileInputChecks([tool.spec]).check(tool.spec.name, input);
  if (!checked.ok) throw new ToolError(checked.message);
  return checked.input;
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
