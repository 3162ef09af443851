/**
 * The main step as a source entry exporting `run()` and doing nothing on import, for
 * `@github/local-action` (`local-action run . src/action/main-entry.ts .env --post
 * src/action/post-entry.ts`), which loads un-bundled source through tsx with `@actions/core` stubbed.
 */
import { runActionStep } from "./action-step.js";

export function run(): Promise<void> {
  return runActionStep("main");
}
