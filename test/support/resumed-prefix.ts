/**
 * A turn through CodingAgent that calls a tool, its session saved to disk, and a second turn from
 * the session loaded back with a freshly made provider: the requests a wire-provider test compares
 * to show that a resume keeps the request prefix byte-stable (what a prompt cache needs).
 */
import { join } from "node:path";
import { CodingAgent } from "../../src/agent.js";
import { allowAll } from "../../src/core/approval.js";
import { nullSink } from "../../src/core/events.js";
import type { ModelProvider } from "../../src/core/provider.js";
import { tempDir } from "./temp-dir.js";
import { appendLineTool } from "./test-tools.js";

/**
 * Runs "Append the tag one." (the model's two steps: `append_line`, then an answer — queue them
 * first), saves the session, and runs "Once more." from it with `make()`'s new provider (queue its
 * answer). The server's bodies are the three requests.
 */
export async function turnThenResumedTurn(t: { after(fn: () => unknown): void }, make: () => ModelProvider): Promise<void> {
  const workspace = await tempDir(t);
  const config = { workspace, builtinTools: false, tools: [appendLineTool()] };
  const agent = new CodingAgent(make(), config);
  await agent.turn("Append the tag one.", nullSink, allowAll);
  const path = join(await tempDir(t), "session.json");
  await agent.saveSessionTo(path);
  const resumed = CodingAgent.fromSession(make(), config, await CodingAgent.loadSessionFrom(path));
  await resumed.turn("Once more.", nullSink, allowAll);
}

/** A Messages API body's JSON without its `cache_control` marks (they move to the newest message each step, by design). */
export function withoutCacheMarks(value: unknown): string {
  return JSON.stringify(value, (key, v) => (key === "cache_control" ? undefined : v));
}
