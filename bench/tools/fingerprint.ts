/**
 * Benchmark, run on demand (not a test): `node dist/bench/tools/fingerprint.js [--files N] [--runs N]`.
 * The cost of the workspace fingerprint taken before each write or exec call (and again when
 * an interrupted call is revived): builds a tree of 20,000 files (plus an ignored node_modules
 * and dist/ that the walk must skip), then prints the median time of a whole walk and of the
 * budgeted one taken before a call, of writing the
 * fingerprint file beside a checkpoint, and of listing the changes between two fingerprints.
 * The walk runs while the call's approval is asked; the rest is on the call's path to start.
 * Then the latency it adds where it matters: from the end of the model's reply to the start
 * of its write call (intent commit, approval, fingerprint, `started` commit), with the
 * checkpoint store on disk, in the example fixture `tasks/fixtures/calc` and in the big tree,
 * fingerprint on and off (target: ≤ 100 ms on the example suite).
 */
import { cp, mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { CodingAgent } from "../../src/agent.js";
import { allowAll } from "../../src/core/approval.js";
import { workspaceChanges } from "../../src/core/conversation.js";
import type { Tool } from "../../src/core/tool.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { CheckpointStore } from "../../src/store/checkpoint-store.js";
import { saveFingerprint } from "../../src/store/fingerprint-file.js";
import { FINGERPRINT_BUDGET_MS, takeFingerprint } from "../../src/tools/workspace-fingerprint.js";

const FILES = numberArg("--files", 20_000);
const RUNS = numberArg("--runs", 7);
const FILES_PER_DIR = 50;

function numberArg(flag: string, fallback: number): number {
  const at = process.argv.indexOf(flag);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

async function buildTree(root: string): Promise<void> {
  await writeFile(join(root, ".gitignore"), "dist/\n*.log\n");
  for (const skipped of ["node_modules/pkg", "dist"]) {
    await mkdir(join(root, skipped), { recursive: true });
    for (let i = 0; i < 500; i++) await writeFile(join(root, skipped, `f${i}.js`), "x\n");
  }
  const made = new Set<string>();
  for (let i = 0; i < FILES; i++) {
    const dir = join(root, `pkg${i % 8}`, `mod${Math.floor(i / FILES_PER_DIR) % 50}`, `part${Math.floor(i / (FILES_PER_DIR * 50))}`);
    if (!made.has(dir)) await mkdir(dir, { recursive: true });
    made.add(dir);
    await writeFile(join(dir, `file${i}.ts`), `export const value = ${i};\n`);
  }
}

async function median(label: string, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const mid = times[Math.floor(times.length / 2)]!;
  console.log(`  ${label}: ${mid.toFixed(1)} ms (median of ${RUNS}; min ${times[0]!.toFixed(1)}, max ${times[times.length - 1]!.toFixed(1)})`);
  return mid;
}

/** Milliseconds from the end of a reply asking for a write call to the start of that call. */
async function replyToToolStart(workspace: string, checkpointDir: string, fingerprint: boolean): Promise<number> {
  let replyEnd = 0;
  let toolStart = 0;
  const touch: Tool = {
    spec: { name: "touch", description: "Writes a file.", inputSchema: { type: "object" } },
    effect: "write",
    async run(_input, ctx) {
      toolStart = performance.now();
      await writeFile(join(ctx.workspace, "touched.txt"), "x");
      return { content: "ok" };
    },
  };
  const agent = new CodingAgent(new ScriptedProvider([{ call: "touch", input: {} }, { say: "done" }], { cache: false }), {
    workspace, builtinTools: false, tools: [touch], fingerprint,
  });
  const store = new CheckpointStore(checkpointDir);
  agent.setCommitHook(store.hook);
  await agent.turn("go", { emit: (e) => void (e.type === "usage" && replyEnd === 0 ? (replyEnd = performance.now()) : undefined) }, allowAll);
  await store.close();
  await rm(checkpointDir, { recursive: true, force: true });
  return toolStart - replyEnd;
}

async function medianOf(fn: () => Promise<number>): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < RUNS; r++) times.push(await fn());
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

const root = await mkdtemp(join(tmpdir(), "rhema-bench-fingerprint-"));
try {
  const workspace = join(root, "ws");
  await mkdir(workspace);
  await buildTree(workspace);
  const before = await takeFingerprint(workspace, { budgetMs: Infinity });
  console.log(`fingerprint of ${Object.keys(before.files).length} files (capped: ${before.capped}; node_modules and dist/ skipped):`);
  await median("whole walk (path, size, mtime; no time budget)", () => takeFingerprint(workspace, { budgetMs: Infinity }));
  const budgeted = await takeFingerprint(workspace);
  console.log(`  the walk before a call (budget ${FINGERPRINT_BUDGET_MS} ms) covered ${Object.keys(budgeted.files).length} files (capped: ${budgeted.capped})`);
  await median("walk before a call (budgeted)", () => takeFingerprint(workspace));
  await median("write the fingerprint file (atomic, fsync'd)", () => saveFingerprint(join(root, "cp", "session.fingerprint.json"), "call_1", before));
  await writeFile(join(workspace, "pkg0/mod0/part0/file0.ts"), "changed\n");
  await utimes(join(workspace, "pkg1/mod0/part0/file1.ts"), new Date(), new Date());
  await writeFile(join(workspace, "new.txt"), "n\n");
  const after = await takeFingerprint(workspace, { budgetMs: Infinity });
  await median("list the changes", async () => workspaceChanges(before, after));
  const changes = workspaceChanges(before, after);
  console.log(`  changes found: modified ${changes.modified.join(", ")}; created ${changes.created.join(", ")}`);

  const example = join(root, "calc");
  await cp(new URL("../../../tasks/fixtures/calc", import.meta.url), example, { recursive: true });
  console.log("reply end → first tool start (median):");
  for (const [name, ws] of [["tasks/fixtures/calc", example], [`${FILES} files`, workspace]] as const) {
    const on = await medianOf(() => replyToToolStart(ws, join(root, "cp-latency"), true));
    const off = await medianOf(() => replyToToolStart(ws, join(root, "cp-latency"), false));
    console.log(`  ${name}: ${on.toFixed(1)} ms with the fingerprint, ${off.toFixed(1)} ms without (target ≤ 100 ms on the example suite)`);
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
