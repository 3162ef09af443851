import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadTasks } from "../../../src/runner/tasks/suite-loader.js";
import { planSuite } from "../../../src/runner/plan/plan-suite.js";
import type { TrialKey } from "../../../src/runner/trials/trial-key.js";
import { OPEN_POLICY, writeFiles } from "../../support/suite-files.js";
import { tempDir } from "../../support/temp-dir.js";

const trial = (repeat: number): TrialKey => ({ suite: "s", id: "t", variant: null, repeat });
const SECRET = "sk-ant-api03-" + "x".repeat(40);

async function plannedSuite(root: string, body: string, flags: Parameters<typeof planSuite>[1] = {}, env: Record<string, string> = {}) {
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "s/t.yaml": `prompt: Say done.\npolicy: ../policy.yaml\n${body}` });
  const loaded = await loadTasks([join(root, "s")], { cwd: root });
  return planSuite(loaded.tasks, flags, { cwd: root, env });
}

test("a scripted task's plan makes a provider per trial (each with its own script cursor) and a fresh approval per trial", async (t) => {
  const plan = (await plannedSuite(await tempDir(t), "model: { provider: scripted, script: [{ say: done }] }\n")).plans.get("s/t")!;
  assert.equal(plan.capabilities.scripted, true);
  assert.notEqual(plan.providerFor(trial(1)), plan.providerFor(trial(2)));
  assert.equal(plan.providerFor(trial(2)), plan.providerFor(trial(2)), "one trial asks again: the same provider");
  assert.equal(plan.providerFor(trial(1)).answersFromScript, true);
  assert.notEqual(plan.approvalFor(trial(1)), plan.approvalFor(trial(2)));
  assert.equal(plan.approvalFor(trial(3)), plan.approvalFor(trial(3)));
});

test("a named model's provider is made once, at planning (a missing key is found before anything runs), and shared by the trials", async (t) => {
  const root = await tempDir(t);
  const suite = await plannedSuite(root, "", { provider: "openai", model: "m", baseUrl: "http://127.0.0.1:9/v1" });
  const plan = suite.plans.get("s/t")!;
  assert.equal(plan.capabilities.scripted, false);
  assert.equal(plan.providerFor(trial(1)), plan.providerFor(trial(2)));
  await assert.rejects(plannedSuite(await tempDir(t), "", { provider: "anthropic", model: "m" }), /set ANTHROPIC_API_KEY/);
});

test("the plan holds the commands' environment scrubbed once, keeping what --allow-env names", async (t) => {
  const env = { PATH: "/usr/bin", ANTHROPIC_API_KEY: SECRET, KEPT_TOKEN: SECRET };
  const suite = await plannedSuite(await tempDir(t), "model: { provider: scripted, script: [{ say: done }] }\n", { allowEnv: ["KEPT_TOKEN"] }, env);
  const commands = suite.plans.get("s/t")!.commands;
  assert.deepEqual(commands.env, { PATH: "/usr/bin", KEPT_TOKEN: SECRET });
  assert.deepEqual(commands.allowEnv, ["KEPT_TOKEN"]);
});
