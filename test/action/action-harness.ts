/**
 * Runs the committed action bundle the way GitHub's runner does: `node action-dist/index.js`
 * on Node 24 with `INPUT_*`, `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, `GITHUB_STATE`,
 * `GITHUB_WORKSPACE` and friends set, and the post step with the main step's state as
 * `STATE_*`. Node 24 comes from the registry's `node` package, installed once under /tmp. The bundle
 * runs from a copy outside the repository (no node_modules above it), as GitHub checks it out.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "../support/paths.js";

export const NODE24_VERSION = "24.21.0";
const NODE24_PREFIX = process.env.RHEMA_NODE24_PREFIX ?? "/tmp/rhema-node24";
/** The committed bundle; RHEMA_ACTION_DIST names another build of it (a branch before action-dist is rebuilt). */
export const actionDist = process.env.RHEMA_ACTION_DIST ?? join(repoRoot, "action-dist");

let bundleCopy: string | null = null;
/**
 * The bundle's entry in a copy of it outside the repository, as GitHub's checkout of the action
 * has it: no node_modules anywhere above, so a dependency left out of the bundle fails here too.
 */
export function actionEntry(): string {
  if (bundleCopy === null) {
    const dir = mkdtempSync(join(tmpdir(), "rhema-action-bundle-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    cpSync(actionDist, dir, { recursive: true });
    bundleCopy = join(dir, "index.js");
  }
  return bundleCopy;
}

/** The Node 24 binary, installed from the registry on first use. */
export function node24(): string {
  const bin = join(NODE24_PREFIX, "node_modules", "node", "bin", "node");
  if (!existsSync(bin)) execFileSync("npm", ["i", "--prefix", NODE24_PREFIX, `node@${NODE24_VERSION}`], { stdio: "ignore" });
  const version = execFileSync(bin, ["--version"], { encoding: "utf8" }).trim();
  if (version !== `v${NODE24_VERSION}`) throw new Error(`expected node v${NODE24_VERSION} at ${bin}, got ${version}`);
  return bin;
}

/** One job's files: what the runner gives a step. */
export interface JobFiles {
  /** The checkout (GITHUB_WORKSPACE). */
  workspace: string;
  /** Where GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_STATE live. */
  runnerDir: string;
}

export interface StepOptions {
  inputs: Record<string, string>;
  /** GITHUB_* and others; merged over the defaults. */
  env?: Record<string, string>;
  phase?: "main" | "post";
}

export interface StepResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
}

export async function prepareJob(root: string): Promise<JobFiles> {
  const runnerDir = join(root, "runner");
  await mkdir(runnerDir, { recursive: true });
  for (const f of ["output", "summary.md", "state"]) if (!existsSync(join(runnerDir, f))) await writeFile(join(runnerDir, f), "");
  return { workspace: join(root, "workspace"), runnerDir };
}

/** Starts a step; `finished` resolves when it exits. */
export async function startStep(job: JobFiles, opts: StepOptions): Promise<{ child: ChildProcess; finished: Promise<StepResult> }> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: job.runnerDir,
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_WORKSPACE: job.workspace,
    GITHUB_OUTPUT: join(job.runnerDir, "output"),
    GITHUB_STEP_SUMMARY: join(job.runnerDir, "summary.md"),
    GITHUB_STATE: join(job.runnerDir, "state"),
    GITHUB_WORKFLOW: "nightly",
    GITHUB_JOB: "suite",
    GITHUB_RUN_ID: "4242",
    GITHUB_RUN_ATTEMPT: "1",
    GITHUB_REPOSITORY: "octo/repo",
    ...opts.env,
  };
  for (const [name, value] of Object.entries(opts.inputs)) env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] = value;
  if (opts.phase === "post") Object.assign(env, stateEnv(await readFile(join(job.runnerDir, "state"), "utf8")));
  const child = spawn(node24(), [actionEntry()], { cwd: job.workspace, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const finished = new Promise<StepResult>((resolve) => {
    child.on("close", (code, signal) => {
      void readFile(join(job.runnerDir, "output"), "utf8").then((text) => resolve({ code, signal, stdout, stderr, outputs: parseCommandFile(text) }));
    });
  });
  return { child, finished };
}

export async function runStep(job: JobFiles, opts: StepOptions): Promise<StepResult> {
  return (await startStep(job, opts)).finished;
}

/** The `name<<DELIM\nvalue\nDELIM` entries of GITHUB_OUTPUT / GITHUB_STATE; a later entry wins. */
export function parseCommandFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = /^([^<]+)<<(.+)$/.exec(lines[i]!);
    if (!m) continue;
    const value: string[] = [];
    for (i++; i < lines.length && lines[i] !== m[2]; i++) value.push(lines[i]!);
    out[m[1]!] = value.join("\n");
  }
  return out;
}

/** What the runner hands the post step: each saved state as STATE_<name>. */
function stateEnv(text: string): Record<string, string> {
  return Object.fromEntries(Object.entries(parseCommandFile(text)).map(([k, v]) => [`STATE_${k}`, v]));
}

/** The workflow commands (`::error title=…::message`) a step printed. */
export function workflowCommands(stdout: string, command: "error" | "warning" | "notice"): string[] {
  return stdout.split("\n").filter((l) => l.startsWith(`::${command} `) || l.startsWith(`::${command}::`));
}

/** The groups a step printed (`::group::title` … `::endgroup::`), with the lines inside each. */
export function taskGroups(stdout: string): { title: string; lines: string[] }[] {
  const groups: { title: string; lines: string[] }[] = [];
  let open: { title: string; lines: string[] } | null = null;
  for (const line of stdout.split("\n")) {
    if (line.startsWith("::group::")) {
      if (open) throw new Error(`a group inside the group "${open.title}": ${line}`);
      open = { title: line.slice("::group::".length), lines: [] };
    } else if (line === "::endgroup::") {
      if (!open) throw new Error("::endgroup:: without a group");
      groups.push(open);
      open = null;
    } else if (open) open.lines.push(line);
  }
  if (open) throw new Error(`the group "${open.title}" is never closed`);
  return groups;
}
