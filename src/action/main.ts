/**
 * The action's entry in the bundle (action-dist/index.js, both `main` and `post` in action.yml):
 * the post step when the main step left its state, else the main step (action-step.ts).
 */
import * as core from "@actions/core";
import { runActionStep } from "./action-step.js";
import { STATE } from "./run-action.js";

await runActionStep(core.getState(STATE.isPost) === "true" ? "post" : "main");
