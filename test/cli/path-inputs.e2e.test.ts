/**
 * A property of every path input, through the built CLI and the Action's bundle: each path flag
 * and path field — task `workspace.from` and `policy`, --out, --junit, --stats, --summary,
 * --policy, --pricing, --quarantine (run and validate), --cassette, the positional paths, report merge's inputs and --out, bench replay's
 * inputs, --pricing and --chart, policy check's --policy and --workspace, the Action's `out`,
 * `tasks`, `policy`, `pricing`, `quarantine`, `cassette` — fed "", blanks, ".", "/", a link to an input, a FIFO, a device
 * (mknod copies of /dev/null and /dev/full in the temp project, never a path under /dev), a
 * missing parent, a path of spaces and unicode. Whatever each does, none deletes or replaces
 * anything it did not create (the project tree is snapshotted before and after: type, inode,
 * bytes, link text, device number), none hangs (a FIFO without a reader included), and each
 * that refuses exits 2 (3 for an output that cannot be written) with a message naming the path
 * or flag, no stack trace.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstat, mkdir, readFile, readdir, readlink, symlink, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { cliEnv, startCli, type CliResult } from "../support/cli.js";
import { tempDir } from "../support/temp-dir.js";
import { prepareJob, runStep } from "../action/action-harness.js";

const ROOT = process.getuid?.() === 0;
const POLICY = "version: 1\ndefault: deny\nrules:\n  - allow: { tools: [read_file, list_dir, write_file] }\n";
const TASK = `prompt: Say ok.
policy: ../../policy.yaml
workspace: { from: ../../fixture }
model: { provider: scripted, script: [{ say: ok }] }
`;

/** Every entry under `root` as type, inode and content (bytes hashed, link text, device number). */
async function snapshot(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string): Promise<void> => {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const path = join(dir, name);
      const what = await entryOf(path);
      if (what === null) continue;
      out.set(relative(root, path), what);
      if (what.startsWith("dir ")) await walk(path);
    }
  };
  await walk(root);
  return out;
}

/**
 * The entries of `before` as they are now under `root` (what `lost` compares): only those, so a
 * check after each case costs the project's size, not that of every run directory made so far.
 */
async function recheck(root: string, before: ReadonlyMap<string, string>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const rel of before.keys()) {
    const what = await entryOf(join(root, rel));
    if (what !== null) out.set(rel, what);
  }
  return out;
}

/** One entry as type, inode and content; null when it is not there. */
async function entryOf(path: string): Promise<string | null> {
  const info = await lstat(path).catch(() => null);
  if (info === null) return null;
  if (info.isDirectory()) return `dir ${info.ino}`;
  if (info.isFile()) {
    // A temp file another case's run renamed away meanwhile is gone (as an entry of `before` would show).
    const bytes = await readFile(path).catch(() => null);
    return bytes === null ? null : `file ${info.ino} ${createHash("sha256").update(bytes).digest("hex")}`;
  }
  if (info.isSymbolicLink()) return `link ${info.ino} ${await readlink(path)}`;
  return `special ${info.ino} ${info.mode} ${info.rdev}`;
}

/** What of `before` is gone or changed in `after` (new entries are what the command created). */
function lost(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  return [...before].filter(([rel, what]) => after.get(rel) !== what).map(([rel, what]) => `${rel}: ${what} → ${after.get(rel) ?? "gone"}`);
}

async function makeProject(root: string): Promise<void> {
  await mkdir(join(root, "tasks/s"), { recursive: true });
  await mkdir(join(root, "fixture"));
  await mkdir(join(root, "special"));
  await writeFile(join(root, "tasks/s/t.yaml"), TASK);
  await writeFile(join(root, "policy.yaml"), POLICY);
  await writeFile(join(root, "fixture/a.txt"), "fixture\n");
  await writeFile(join(root, "README.md"), "the project\n");
  execFileSync("mkfifo", [join(root, "special/fifo")]);
  // Only root may make device nodes (CAP_MKNOD): as another user the device cases are left out, the FIFO's stay.
  if (ROOT) {
    execFileSync("mknod", [join(root, "special/null"), "c", "1", "3"]);
    execFileSync("mknod", [join(root, "special/full"), "c", "1", "7"]);
  }
  await symlink("tasks/s/t.yaml", join(root, "link-to-task"));
  await symlink("tasks", join(root, "link-to-tasks"));
  await symlink("shard", join(root, "link-to-shard"));
  await symlink("policy.yaml", join(root, "link-to-policy"));
  await symlink("shard/stats.json", join(root, "link-to-shard-stats"));
  await symlink("no/such/target", join(root, "link-to-nothing"));
  await writeFile(join(root, "samples.jsonl"), CALIBRATION_SAMPLES);
  await symlink("samples.jsonl", join(root, "link-to-samples"));
}

/** Requests with their bills, two sessions of two: what `bench calibrate` fits from. */
const CALIBRATION_SAMPLES = ["s1", "s2"].flatMap((session, k) => [1, 2].map((n) => JSON.stringify({
  session, system: "You are terse.", tools: [],
  messages: Array.from({ length: n }, (_, i) => ({ role: "user", content: [{ type: "text", text: "word ".repeat(200 * (i + 1 + k)) }] })),
  billed: { inputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 300 * n + 100 * k, outputTokens: 5 },
}))).join("\n") + "\n";

/** The hostile values, each with what a message about it must name (the flag, for values that are no path). */
const VALUES = (link: string): { label: string; value: string; names: string | null }[] => [
  { label: "empty", value: "", names: null },
  { label: "blanks", value: "   ", names: null },
  { label: "dot", value: ".", names: "" },
  { label: "root", value: "/", names: "/" },
  { label: "link to an input", value: link, names: link },
  { label: "FIFO", value: "special/fifo", names: "special/fifo" },
  ...(ROOT ? [
    { label: "device (null)", value: "special/null", names: "special/null" },
    { label: "device (full)", value: "special/full", names: "special/full" },
  ] : []),
  { label: "link to nothing", value: "link-to-nothing", names: "link-to-nothing" },
  { label: "missing parent", value: "nope/deeper/x", names: "nope/deeper/x" },
  { label: "spaces and unicode", value: "ünï cødé ☃/rép ort", names: "ünï cødé ☃/rép ort" },
];

interface Case {
  name: string;
  flag: string;
  value: string;
  names: string | null;
  args: string[];
}

function cliCases(): Case[] {
  const cases: Case[] = [];
  let n = 0;
  const fresh = () => `runs/r${n++}`;
  const add = (command: string, flag: string, link: string, args: (value: string) => string[], skip: string[] = []) => {
    for (const v of VALUES(link)) if (!skip.includes(v.label)) cases.push({ name: `${command} ${flag} = ${v.label}`, flag, value: v.value, names: v.names, args: args(v.value) });
  };
  const run = ["--sandbox", "off"];
  add("run", "--out", "link-to-tasks", (v) => ["run", "tasks", ...run, "--out", v]);
  // --restart wipes a run directory's tasks/: never a folder that is not one (a project's tasks/).
  add("run --restart", "--out", "link-to-tasks", (v) => ["run", "tasks", ...run, "--restart", "--out", v]);
  for (const flag of ["--junit", "--stats", "--summary"]) add("run", flag, "link-to-task", (v) => ["run", "tasks", ...run, "--out", fresh(), flag, v]);
  add("run", "--policy", "link-to-policy", (v) => ["run", "tasks", ...run, "--out", fresh(), "--policy", v]);
  add("run", "--pricing", "link-to-policy", (v) => ["run", "tasks", ...run, "--out", fresh(), "--pricing", v]);
  add("run", "--quarantine", "link-to-policy", (v) => ["run", "tasks", ...run, "--out", fresh(), "--quarantine", v]);
  // "/" as a task path would walk the whole machine for task files: meaningful, only slow.
  add("run", "paths", "link-to-tasks", (v) => ["run", v, ...run, "--out", fresh()], ["root"]);
  add("validate", "paths", "link-to-task", (v) => ["validate", v], ["root"]);
  add("validate", "--policy", "link-to-policy", (v) => ["validate", "tasks", "--policy", v]);
  add("validate", "--pricing", "link-to-policy", (v) => ["validate", "tasks", "--pricing", v]);
  add("validate", "--quarantine", "link-to-policy", (v) => ["validate", "tasks", "--quarantine", v]);
  add("report merge", "dirs", "link-to-shard", (v) => ["report", "merge", v, "--out", fresh()]);
  add("report merge", "--out", "link-to-shard", (v) => ["report", "merge", "shard", "--out", v]);
  add("bench replay", "inputs", "link-to-shard", (v) => ["bench", "replay", v], ["root"]);
  add("bench replay", "--pricing", "link-to-policy", (v) => ["bench", "replay", "shard", "--model", "claude-sonnet-4-5", "--pricing", v]);
  add("bench replay", "--chart", "link-to-shard-stats", (v) => ["bench", "replay", "shard", "--chart", v]);
  add("run", "--calibration", "link-to-policy", (v) => ["run", "tasks", ...run, "--out", fresh(), "--calibration", v]);
  // A cassette folder that holds none records into it ("/" would record into the machine's root: meaningful, not a test's to do).
  add("run", "--cassette", "link-to-tasks", (v) => ["run", "tasks", ...run, "--out", fresh(), "--cassette", v], ["root"]);
  add("bench replay", "--calibration", "link-to-policy", (v) => ["bench", "replay", "shard", "--calibration", v]);
  add("bench calibrate", "inputs", "link-to-samples", (v) => ["bench", "calibrate", v, "--out", `${fresh()}.json`], ["root"]);
  add("bench calibrate", "--out", "link-to-samples", (v) => ["bench", "calibrate", "samples.jsonl", "--out", v]);
  add("policy check", "--policy", "link-to-policy", (v) => ["policy", "check", "--tool", "read_file", "--input", '{"path":"a"}', "--policy", v]);
  add("policy check", "--workspace", "link-to-tasks", (v) => ["policy", "check", "--tool", "read_file", "--input", '{"path":"a"}', "--policy", "policy.yaml", "--workspace", v]);
  return cases;
}

/** Runs the CLI with a deadline: a FIFO must never make it hang. */
async function runBounded(args: string[], cwd: string): Promise<CliResult & { hung: boolean }> {
  const { child, done } = startCli(args, { cwd, env: cliEnv() });
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    child.kill("SIGKILL");
  }, 90_000);
  const result = await done;
  clearTimeout(timer);
  return { ...result, hung };
}

function checkOutcome(c: Case, result: { code: number | null; stdout: string; stderr: string; hung: boolean }): string[] {
  const problems: string[] = [];
  const said = result.stderr + result.stdout;
  if (result.hung) problems.push("hung");
  if (![0, 1, 2, 3].includes(result.code ?? -1)) problems.push(`exit ${result.code}`);
  if (/\n\s+at \S.*:\d+:\d+\)?\n/.test(said)) problems.push("printed a stack trace");
  if (result.code !== 0 && result.code !== 1 && result.code !== null) {
    if (c.names === null ? !said.includes(c.flag.startsWith("-") ? c.flag : "path") : !said.includes(c.names)) problems.push(`the message does not name ${c.names ?? c.flag}`);
  }
  if (c.names === null && result.code !== 2) problems.push(`an empty path is exit ${result.code}, not 2`);
  return problems;
}

test("no path flag, fed nothing, a link to an input, a FIFO, a device or a missing parent, deletes or replaces what it did not create, hangs, or exits without naming it", async (t) => {
  const root = await tempDir(t, "rhema-paths-");
  await makeProject(root);
  const shard = await runBounded(["run", "tasks", "--sandbox", "off", "--out", "shard"], root);
  assert.equal(shard.code, 0, shard.stderr);
  const before = await snapshot(root);
  const cases = cliCases();
  const failures: string[] = [];
  const queue = [...cases];
  const worker = async () => {
    for (let c = queue.shift(); c !== undefined; c = queue.shift()) {
      const result = await runBounded(c.args, root);
      const problems = checkOutcome(c, result);
      const gone = lost(before, await recheck(root, before));
      if (gone.length > 0) problems.push(`changed what it did not create: ${gone.join("; ")}`);
      if (problems.length > 0) failures.push(`${c.name} (exit ${result.code}): ${problems.join(", ")}\n  ${result.stderr.trim().split("\n").slice(-3).join("\n  ")}`);
      else t.diagnostic(`${c.name}: exit ${result.code}`);
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  assert.deepEqual(failures, [], failures.join("\n"));
  // The special files are still what they were: never renamed over, never replaced.
  if (ROOT) assert.ok((await lstat(join(root, "special/full"))).isCharacterDevice());
  else t.diagnostic("not root: no device nodes (mknod needs CAP_MKNOD)");
  assert.ok((await lstat(join(root, "special/fifo"))).isFIFO());
  t.diagnostic(`${cases.length} cases`);
});

test("the Action's path inputs: out set to nothing is refused (it has a default), and no value deletes or replaces anything", async (t) => {
  const job = await prepareJob(await tempDir(t, "rhema-action-paths-"));
  await mkdir(job.workspace, { recursive: true });
  await makeProject(job.workspace);
  const shard = await runBounded(["run", "tasks", "--sandbox", "off", "--out", "shard"], job.workspace);
  assert.equal(shard.code, 0, shard.stderr);
  const before = await snapshot(job.workspace);
  const cases: { input: string; value: string; names: string }[] = [
    ...["", "  ", ".", "/", "link-to-tasks", "special/fifo", ...(ROOT ? ["special/null"] : []), "README.md"].map((value) => ({ input: "out", value, names: value.trim() === "" ? 'input "out"' : value === "." ? job.workspace : value })),
    { input: "tasks", value: "", names: 'input "tasks"' },
    { input: "policy", value: "special/fifo", names: "special/fifo" },
    ...(ROOT ? [{ input: "pricing", value: "special/full", names: "special/full" }] : [{ input: "pricing", value: "special/fifo", names: "special/fifo" }]),
    { input: "quarantine", value: "special/fifo", names: "special/fifo" },
    { input: "cassette", value: ROOT ? "special/null" : "special/fifo", names: ROOT ? "special/null" : "special/fifo" },
  ];
  for (const c of cases) {
    const inputs: Record<string, string> = { tasks: "tasks", out: ".rhema/runs/latest", resume: "false", sandbox: "off", [c.input]: c.value };
    const step = await runStep(job, { inputs });
    assert.deepEqual(lost(before, await recheck(job.workspace, before)), [], `${c.input}=${JSON.stringify(c.value)}`);
    // Every task names its own policy, so the policy input is not read: it may pass.
    if (c.input === "policy" && step.code === 0) continue;
    assert.equal(step.code, 1, `${c.input}=${JSON.stringify(c.value)}: ${step.stdout}`);
    assert.ok(step.stdout.includes(c.names), `${c.input}=${JSON.stringify(c.value)} names ${c.names}: ${step.stdout.split("\n").filter((l) => l.includes("::error")).join("\n")}`);
  }
  assert.ok((await lstat(join(job.workspace, "special/fifo"))).isFIFO());
});
