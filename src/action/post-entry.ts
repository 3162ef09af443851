/**
 * The post step as a source entry exporting `run()` (see main-entry.ts). `@github/local-action`
 * keeps no state from main to post: the post step then derives the run directory and the cache
 * key from the inputs and GitHub's variables, as the main step did.
 */
import { runActionStep } from "./action-step.js";

export function run(): Promise<void> {
  return runActionStep("post");
}
