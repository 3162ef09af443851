/**
 * One decision in a fresh process, for bench/policy's cold figures: imports the policy engine,
 * decides one call (`shell` or `write_file`, from argv) under the corpus policy on a real temp
 * workspace, then waits one timer tick — so a main thread blocked after the decision (V8
 * compiling the grammar in the background of the first parse) is counted too. Prints one JSON
 * line `{tool, importMs, decideMs, settleMs}`; spawned by decide.ts, not run by hand.
 */
import { performance } from "node:perf_hooks";

const startMs = performance.now();
const tool = process.argv[2] === "shell" ? "shell" : "write_file";
const workspace = process.argv[3]!;
const { PolicyApproval } = await import("../../src/policy/decide/policy-approval.js");
const { parsePolicyText } = await import("../../src/policy/file/policy-file.js");
const { CORPUS_POLICY_YAML } = await import("../../test/policy/shell-corpus.js");
const importedMs = performance.now();
const { policy } = parsePolicyText(CORPUS_POLICY_YAML, "policy.yaml");
const approval = new PolicyApproval(policy);
const request = tool === "shell"
  ? { callId: "cold", tool, effect: "exec" as const, input: { command: "npm test" }, workspace, paths: [], command: "npm test" }
  : { callId: "cold", tool, effect: "write" as const, input: { path: "src/a.ts", content: "x" }, workspace, paths: ["src/a.ts"] };
await approval.decide(request, new AbortController().signal);
const decidedMs = performance.now();
await new Promise((resolve) => setTimeout(resolve, 0));
const settledMs = performance.now();
console.log(JSON.stringify({ tool, importMs: importedMs - startMs, decideMs: decidedMs - importedMs, settleMs: settledMs - importedMs }));
