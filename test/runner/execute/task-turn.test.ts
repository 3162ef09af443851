/**
 * A task's turn: started fresh with the prompt (and images), continued from a checkpoint, or
 * skipped when it had ended; the step budget spans resumes, and the model is told when two
 * steps are left.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { allowAll } from "../../../src/core/approval.js";
import { CheckpointStore } from "../../../src/store/checkpoint-store.js";
import { CodingAgentError } from "../../../src/core/errors.js";
import { nullSink } from "../../../src/core/events.js";
import { textOf } from "../../../src/core/messages.js";
import { ScriptedProvider, type ScriptStep } from "../../../src/providers/scripted.js";
import type { TaskDefinition } from "../../../src/runner/tasks/task-file.js";
import { STEPS_LEFT_NUDGE, runTaskTurn, stepsTaken } from "../../../src/runner/execute/task-turn.js";
import { tempDir } from "../../support/temp-dir.js";

const listing: ScriptStep = { call: "list_dir", input: {} };

function taskOf(images: string[] = [], output?: TaskDefinition["output"]): TaskDefinition {
  return {
    id: "t", suite: "s", file: "/x/t.yaml", contentHash: "h", idPosition: { line: 1, column: 1 }, prompt: "Look around.",
    images, workspace: { from: null, setup: [] }, policy: null, model: null, limits: {}, checks: [], tags: [],
    ...(output ? { output } : {}),
  };
}

async function turn(t: { after(fn: () => unknown): void }, script: ScriptStep[], opts: { maxSteps: number; dir?: string; images?: string[]; output?: TaskDefinition["output"] }) {
  const dir = opts.dir ?? (await tempDir(t));
  const store = new CheckpointStore(join(dir, "cp"));
  const saved = await store.load();
  const run = runTaskTurn({
    task: taskOf(opts.images, opts.output), workspace: dir, provider: new ScriptedProvider(script), approval: allowAll, store, saved,
    sink: nullSink, signal: new AbortController().signal, maxSteps: opts.maxSteps, now: () => new Date(),
    commands: { env: {}, allowEnv: [] }, filterToolOutput: (x) => x,
  });
  try {
    return { dir, agent: await run };
  } finally {
    await store.close();
  }
}

test("tells the model when two steps of its budget are left", async (t) => {
  const { agent } = await turn(t, [listing, listing, listing, { say: "done" }], { maxSteps: 4 });
  const nudges = agent.session.messages.filter((m) => m.role === "user" && textOf(m).includes("steps are left"));
  assert.equal(nudges.length, 1);
  assert.match(textOf(nudges[0]!), new RegExp(`Only ${STEPS_LEFT_NUDGE} steps are left`));
  assert.equal(stepsTaken(agent.session.messages), 4);
  assert.match(textOf(nudges[0]!), /give your summary/);
});

test("a task with output: is told to give its answer with the final_answer tool when two steps are left", async (t) => {
  const output = { schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] }, schemaFile: null, repairs: 1 };
  const { agent } = await turn(t, [listing, listing, listing, { call: "final_answer", input: { n: 1 } }], { maxSteps: 4, output });
  const nudges = agent.session.messages.filter((m) => m.role === "user" && textOf(m).includes("steps are left"));
  assert.equal(nudges.length, 1);
  assert.match(textOf(nudges[0]!), /give your answer with the `final_answer` tool\.$/);
});

test("sends the prompt with its images as the first message", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "shot.png"), Buffer.from("89504e470d0a1a0a", "hex"));
  const { agent } = await turn(t, [{ say: "I see it." }], { maxSteps: 3, dir, images: [join(dir, "shot.png")] });
  assert.deepEqual(agent.session.messages[0], {
    role: "user",
    content: [{ type: "text", text: "Look around." }, { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" }],
  });
});

test("a turn that had ended is not run again", async (t) => {
  const first = await turn(t, [{ say: "done" }], { maxSteps: 3 });
  const provider = new ScriptedProvider([{ say: "again?" }]);
  const saved = await new CheckpointStore(join(first.dir, "cp")).load();
  const again = await runTaskTurn({
    task: taskOf(), workspace: first.dir, provider, approval: allowAll, store: new CheckpointStore(join(first.dir, "cp")), saved,
    sink: nullSink, signal: new AbortController().signal, maxSteps: 3, now: () => new Date(), commands: { env: {}, allowEnv: [] }, filterToolOutput: (x) => x,
  });
  assert.equal(provider.requests.length, 0);
  assert.equal(textOf(again.session.messages.at(-1)!), "done");
});

test("the step budget spans resumes: a continued turn gets only the steps left", async (t) => {
  const dir = await tempDir(t);
  const store = new CheckpointStore(join(dir, "cp"));
  const script = [listing, listing, listing, listing, listing, { say: "done" }];
  // A first run that stops (its cap) after 2 of 3 steps, as if killed there.
  await assert.rejects(turn(t, script, { maxSteps: 2, dir }), (err: unknown) => err instanceof CodingAgentError && err.code === "step_cap");
  await store.close();
  await assert.rejects(turn(t, script, { maxSteps: 3, dir }), (err: unknown) => err instanceof CodingAgentError && err.code === "step_cap");
  const saved = (await new CheckpointStore(join(dir, "cp")).load())!;
  assert.equal(stepsTaken(saved.messages), 3, "the resumed turn took one step, not three");
});
