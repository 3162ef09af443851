/**
 * Tools for engine tests: real side effects on real files, so "ran exactly once" is checked on
 * disk, not in a counter.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import type { Approval, ApprovalRequest, Decision } from "../../src/core/approval.js";
import { ToolError } from "../../src/core/errors.js";
import type { Tool } from "../../src/core/tool.js";

export const LINES_FILE = "lines.txt";

/** `append_line {tag, holdMs?}`: appends `tag` to lines.txt in the workspace, then holds. */
export function appendLineTool(hooks: { onStart?(tag: string): void; onAppended?(tag: string): void } = {}): Tool {
  return {
    spec: {
      name: "append_line",
      description: "Appends a tag line to lines.txt.",
      inputSchema: { type: "object", properties: { tag: { type: "string" }, holdMs: { type: "number" } }, required: ["tag"] },
    },
    effect: "write",
    async plan(input) {
      const tag = (input as { tag?: unknown }).tag;
      if (typeof tag !== "string") throw new ToolError("append_line: `tag` must be a string");
      return { paths: [LINES_FILE] };
    },
    async run(input, ctx) {
      const { tag, holdMs = 0 } = input as { tag: string; holdMs?: number };
      hooks.onStart?.(tag);
      appendFileSync(join(ctx.workspace, LINES_FILE), `${tag}\n`);
      hooks.onAppended?.(tag);
      await sleep(holdMs, ctx.signal);
      return { content: `appended ${tag}` };
    },
  };
}

/** `wait {ms}`: waits, honouring cancel. */
export const waitTool: Tool = {
  spec: { name: "wait", description: "Waits.", inputSchema: { type: "object", properties: { ms: { type: "number" } } } },
  effect: "exec",
  async run(input, ctx) {
    await sleep((input as { ms: number }).ms, ctx.signal);
    return { content: "waited" };
  },
};

/** `explode`: always throws a plain Error. */
export const explodeTool: Tool = {
  spec: { name: "explode", description: "Throws.", inputSchema: { type: "object" } },
  effect: "read",
  async run() {
    throw new Error("kaboom");
  },
};

/** Records every request and answers from a function. */
export class RecordingApproval implements Approval {
  readonly requests: ApprovalRequest[] = [];
  constructor(private readonly answer: (req: ApprovalRequest) => Decision = () => ({ decision: "allow", rule: "test" })) {}
  async decide(req: ApprovalRequest, signal: AbortSignal): Promise<Decision> {
    if (signal.aborted) throw new Error("approval refused: the turn was cancelled");
    this.requests.push(req);
    return this.answer(req);
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("aborted"));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error("aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
