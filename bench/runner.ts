/**
 * bench/runner: the runner's own cost, run on demand (`npm run bench:runner`), printing figures.
 *
 * 200 tasks, each a zero-latency scripted model reading one file and answering, with one check
 * (`true`), run through the built CLI at concurrency 1, 2 and 8: tasks per second and the
 * runner's wall time per task. Then, read off the `--json` event stream of 5 fresh processes
 * each running one task whose first call is a shell command: process start → first model
 * request (target ≤ 0.5 s) and first response → first tool start, from the `tool_call` event
 * (the scripted model's response is complete) to the `approval` event (the tool starts at once
 * after it) — the first shell call pays for loading the bash grammar (target ≤ 100 ms).
 */
import { spawn } from "node:child_process";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const TASKS = Number(process.argv[2] ?? 200);

const POLICY = `version: 1
default: deny
rules:
  - allow: { tools: [read_file] }
  - allow: { shell: ["cat a.txt"] }
`;

const SHELL_TASK = `prompt: Show a.txt.
workspace: { from: ../fixture }
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - call: shell
      input: { command: cat a.txt }
    - say: It says hello.
checks:
  - { name: ok, run: "true" }
`;

async function writeSuite(root: string): Promise<void> {
  await mkdir(join(root, "fixture"), { recursive: true });
  await writeFile(join(root, "fixture/a.txt"), "hello\n");
  await writeFile(join(root, "policy.yaml"), POLICY);
  await mkdir(join(root, "bench"), { recursive: true });
  await mkdir(join(root, "first"), { recursive: true });
  await writeFile(join(root, "first", "shell.yaml"), SHELL_TASK);
  for (let i = 0; i < TASKS; i++) {
    await writeFile(join(root, "bench", `task-${String(i).padStart(3, "0")}.yaml`), `prompt: Read a.txt.
workspace: { from: ../fixture }
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - call: read_file
      input: { path: a.txt }
    - say: It says hello.
checks:
  - { name: ok, run: "true" }
`);
  }
}

function runCli(args: string[], cwd: string, onLine?: (line: string, atMs: number) => void): Promise<{ code: number | null; wallMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ["ignore", "pipe", "ignore"], env: { ...process.env, CI: "true" } });
  let buffer = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      onLine?.(buffer.slice(0, nl), performance.now() - started);
      buffer = buffer.slice(nl + 1);
    }
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, wallMs: performance.now() - started })));
}

/** "median N ms (of a, b, …)" over 5 samples, or a note that the events were missing. */
function medianOf(samplesMs: number[]): string {
  if (samplesMs.length === 0) return "no sample (the events were not seen)";
  const sorted = [...samplesMs].sort((a, b) => a - b);
  return `median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms (of ${samplesMs.map((f) => f.toFixed(0)).join(", ")})`;
}

const root = await mkdtemp(join(tmpdir(), "rhema-bench-runner-"));
try {
  await writeSuite(root);
  console.log(`${TASKS} tasks, zero-latency scripted model, one read_file call and one check each`);
  for (const concurrency of [1, 2, 8]) {
    const out = join(root, `run-${concurrency}`);
    const { code, wallMs } = await runCli(["run", "bench", "--out", out, "--concurrency", String(concurrency)], root);
    if (code !== 0) throw new Error(`the run at concurrency ${concurrency} exited ${code}`);
    console.log(`  concurrency ${concurrency}: ${(TASKS / (wallMs / 1000)).toFixed(1)} tasks/s, ${(wallMs / TASKS).toFixed(1)} ms wall per task (${(wallMs / 1000).toFixed(1)} s in all)`);
  }
  const firstRequests: number[] = [];
  const firstToolStarts: number[] = [];
  for (let i = 0; i < 5; i++) {
    const seen: Record<string, number> = {};
    await runCli(["run", "first", "--out", join(root, `first-${i}`), "--json"], root, (line, atMs) => {
      const event = JSON.parse(line) as { type: string; event?: { type: string } };
      const type = event.event?.type ?? event.type;
      if (seen[type] === undefined) seen[type] = atMs;
    });
    if (seen.request !== undefined) firstRequests.push(seen.request);
    if (seen.tool_call !== undefined && seen.approval !== undefined) firstToolStarts.push(seen.approval - seen.tool_call);
  }
  console.log(`  process start → first model request: ${medianOf(firstRequests)} (target ≤ 500 ms)`);
  console.log(`  first response → first tool start (a shell call): ${medianOf(firstToolStarts)} (target ≤ 100 ms)`);
} finally {
  await rm(root, { recursive: true, force: true });
}
