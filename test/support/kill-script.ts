/**
 * The turn the kill tests interrupt: four steps with real side effects (append_line), streamed
 * slowly enough that a kill can land inside any of them. Shared by the child that is killed
 * and the parent that resumes, so both play the same script.
 */
import type { ScriptStep } from "../../src/providers/script.js";

export const KILL_SCRIPT: ScriptStep[] = [
  { say: "Starting: first I append a.", call: "append_line", input: { tag: "a" }, chunkDelayMs: 40 },
  { say: "Now b and c together.", calls: [{ call: "append_line", input: { tag: "b", holdMs: 300 } }, { call: "append_line", input: { tag: "c" } }], chunkDelayMs: 40 },
  { call: "append_line", input: { tag: "d", holdMs: 300 }, chunkDelayMs: 40 },
  { say: "All four lines are appended; done.", chunkDelayMs: 40 },
];
export const KILL_INPUT = "Append the four tags.";
/** Every boundary holds this long after its commit, so a kill can land right after it. */
export const BOUNDARY_HOLD_MS = 150;
