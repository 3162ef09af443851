/**
 * A child process that runs one real turn with a checkpoint store as its commit hook, and
 * says on stdout where it is (`mark <point> <detail>`), so the parent can SIGKILL it there.
 * argv: workspace, checkpoint dir, and optionally the store's foldMinBytes (default 512).
 */
import { CodingAgent } from "../../src/agent.js";
import { allowAll } from "../../src/core/approval.js";
import { CheckpointStore } from "../../src/store/checkpoint-store.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { BOUNDARY_HOLD_MS, KILL_INPUT, KILL_SCRIPT } from "./kill-script.js";
import { appendLineTool, sleep } from "./test-tools.js";

const [workspace, checkpointDir, foldMinBytes = "512"] = process.argv.slice(2) as [string, string, string?];
const mark = (point: string, detail = "") => process.stdout.write(`mark ${point} ${detail}\n`);

const store = new CheckpointStore(checkpointDir, { foldMinBytes: Number(foldMinBytes) });
const agent = new CodingAgent(new ScriptedProvider(KILL_SCRIPT), {
  workspace,
  builtinTools: false,
  tools: [appendLineTool({ onStart: (tag) => mark("tool-start", tag), onAppended: (tag) => mark("tool-appended", tag) })],
});
agent.setCommitHook(async (commit) => {
  await store.hook(commit);
  if (commit.boundary === "input") mark("environment", JSON.stringify(commit.session.environment));
  mark(`after-${commit.boundary}`, commit.boundary === "started" ? Object.entries(commit.session.calls ?? {}).filter(([, r]) => r.state === "started").map(([id]) => id).join(",") : String(commit.session.messages.length));
  await sleep(BOUNDARY_HOLD_MS);
});
await agent.turn(KILL_INPUT, { emit: (e) => void (e.type === "text" ? mark("stream-text") : undefined) }, allowAll);
await store.close();
mark("done");
