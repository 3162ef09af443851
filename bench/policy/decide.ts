/**
 * Policy decision speed over the shell corpus (test/policy/shell-corpus.ts), a shell parse per
 * decision. Run on demand after a build: `node dist/bench/policy/decide.js [rounds]`.
 * Prints decisions per second, median and p99 per decision for two paths:
 * - pure: parse + analyse + resolve paths by text + decide (what `policy check` without a disk does);
 * - PolicyApproval.decide on a real temp workspace (paths resolved through realpath).
 * Target: median under 1 ms.
 */
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { ApprovalRequest } from "../../src/core/approval.js";
import { loadBashParser } from "../../src/policy/shell/bash-parser.js";
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
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
