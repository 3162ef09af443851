/**
 * Policy decision speed over the shell corpus (test/policy/shell-corpus.ts), a shell parse per
 * decision. Run on demand after a build: `node dist/bench/policy/decide.js [rounds]`.
 * Prints decisions per second, median and p99 per decision for two paths:
 * - pure: parse + analyse + resolve paths by text + decide (what `policy check` without a disk does);
 * - PolicyApproval.decide on a real temp workspace (paths resolved through realpath).
 * Target: median under 1 ms.
 * Then the cold first decision in a fresh process (cold-decision.ts, 5 processes each): a shell
 * call against a write_file call, from the engine's import to the event loop being free again.
 * Target: the shell one at most 150 ms more than the write_file one.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import type { ApprovalRequest } from "../../src/core/approval.js";
import { loadBashParser } from "../../src/policy/shell/grammar/bash-parser.js";
import { decide } from "../../src/policy/decide/decide.js";
import { PolicyApproval } from "../../src/policy/decide/policy-approval.js";
import { parsePolicyText } from "../../src/policy/file/policy-file.js";
import { analyzeShell } from "../../src/policy/shell/shell-analysis.js";
import { resolveShellPathsLexically } from "../../src/policy/shell/shell-paths.js";
import { CORPUS_POLICY_YAML, CORPUS_WORKSPACE, SHELL_CORPUS } from "../../test/policy/shell-corpus.js";

interface Figures {
  decisions: number;
  perSecond: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
}

function figures(samplesMs: number[], totalMs: number): Figures {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { decisions: sorted.length, perSecond: sorted.length / (totalMs / 1000), medianMs: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1)! };
}

function shellRequest(command: string, workspace: string): ApprovalRequest {
  return { callId: "bench", tool: "shell", effect: "exec", input: { command }, workspace, paths: [], command };
}

async function timeRounds(rounds: number, one: (command: string) => unknown): Promise<Figures> {
  const samples: number[] = [];
  const start = performance.now();
  for (let round = 0; round < rounds; round++) {
    for (const { command } of SHELL_CORPUS) {
      const t0 = performance.now();
      await one(command);
      samples.push(performance.now() - t0);
    }
  }
  return figures(samples, performance.now() - start);
}

function report(label: string, f: Figures): void {
  console.log(
    `${label.padEnd(34)} ${String(f.decisions).padStart(6)} decisions  ${f.perSecond.toFixed(0).padStart(7)}/s  ` +
    `median ${(f.medianMs * 1000).toFixed(1)} µs  p99 ${(f.p99Ms * 1000).toFixed(1)} µs  max ${(f.maxMs * 1000).toFixed(1)} µs`,
  );
}

const COLD_DECISION = fileURLToPath(new URL("./cold-decision.js", import.meta.url));
const COLD_TARGET_MS = 150;

/** `settleMs` of one fresh process deciding one call of `tool`. */
function coldDecisionMs(tool: "shell" | "write_file", workspace: string): Promise<number> {
  const child = spawn(process.execPath, [COLD_DECISION, tool, workspace], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) => child.on("close", (code) => {
    if (code !== 0) return reject(new Error(`cold-decision ${tool} exited ${code}`));
    resolve((JSON.parse(out) as { settleMs: number }).settleMs);
  }));
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function reportColdDecisions(workspace: string): Promise<void> {
  const samples: Record<"shell" | "write_file", number[]> = { shell: [], write_file: [] };
  for (let i = 0; i < 5; i++) {
    for (const tool of ["shell", "write_file"] as const) samples[tool].push(await coldDecisionMs(tool, workspace));
  }
  const shell = median(samples.shell);
  const other = median(samples.write_file);
  const show = (values: number[]) => values.map((v) => v.toFixed(0)).join(", ");
  console.log(`cold first decision, fresh process (median of 5): shell ${shell.toFixed(0)} ms (${show(samples.shell)}), ` +
    `write_file ${other.toFixed(0)} ms (${show(samples.write_file)}); shell − write_file ${(shell - other).toFixed(0)} ms (target ≤ ${COLD_TARGET_MS} ms)`);
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 20);
  const loadStart = performance.now();
  const parser = await loadBashParser();
  console.log(`bash grammar loaded in ${(performance.now() - loadStart).toFixed(1)} ms (once per process)`);
  const { policy } = parsePolicyText(CORPUS_POLICY_YAML, "policy.yaml");
  console.log(`corpus: ${SHELL_CORPUS.length} commands × ${rounds} rounds`);

  const pure = (command: string) => {
    const facts = resolveShellPathsLexically(analyzeShell(command, parser), CORPUS_WORKSPACE);
    return decide(shellRequest(command, CORPUS_WORKSPACE), policy, facts);
  };
  await timeRounds(2, pure);
  report("pure (parse+analyse+decide)", await timeRounds(rounds, pure));

  const dir = await realpath(await mkdtemp(join(tmpdir(), "rhema-bench-")));
  try {
    await mkdir(join(dir, "src"), { recursive: true });
    const approval = new PolicyApproval(policy);
    const signal = new AbortController().signal;
    const full = (command: string) => approval.decide(shellRequest(command, dir), signal);
    await timeRounds(2, full);
    report("PolicyApproval.decide (realpath)", await timeRounds(rounds, full));
    await reportColdDecisions(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
