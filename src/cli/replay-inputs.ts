/**
 * What `bench replay` reads: session files in any format it knows (each file's format told from
 * its content — the replay corpus, Claude Code sessions, Codex rollouts, mini-swe-agent
 * trajectories), folders of them, and rhema run directories. A Claude Code main session passed
 * alone brings its subagents with it (`<session>/subagents/agent-*.jsonl`, or the older
 * `agent-*.jsonl` beside it with the same `sessionId`), each replayed as a session of its own.
 */
import { readFile, readdir, stat } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { RhemaError } from "../core/errors.js";
import { CorpusFormatError, chainSessions, type ReplaySession, type SessionFormat } from "../transcript/replay-session.js";
import { parseClaudeCodeSession } from "../transcript/import/claude-code.js";
import { firstJsonObjects } from "../transcript/import/jsonl-lines.js";
import { detectSessionFormat, parseSessionFile } from "../transcript/import/session-formats.js";
import type { SweepInput } from "../transcript/replay-sweep.js";
import { readRunDirSessions } from "../runner/run-dir/recorded-sessions.js";
import { RunDir } from "../runner/run-dir/run-dir.js";
import { readRegularFile } from "../store/input-file.js";

/** One input as read: its name, its format, and its sessions (a main session's subagents among them). */
export interface ReadInput {
  name: string;
  format: SessionFormat;
  sessions: ReplaySession[];
}

/** The inputs, each file or run-directory group one; `chain` joins every session into one. */
export async function loadReplayInputs(paths: readonly string[], chain: boolean, gapMs: number): Promise<{ inputs: SweepInput[]; read: ReadInput[] }> {
  const read: ReadInput[] = [];
  for (const path of paths) {
    const info = await stat(path).catch((err: NodeJS.ErrnoException) => {
      throw new RhemaError("invalid_input", `${path}: cannot read (${err.code ?? err.message})`);
    });
    if (info.isFile()) read.push(await readSessionFile(path, basename(path)));
    else if (await isRunDir(path)) read.push(...await readRunDirInputs(path));
    else read.push(...await readSessionFolder(path));
  }
  const inputs = read.map((r) => ({ name: r.name, sessions: r.sessions }));
  if (!chain) return { inputs, read };
  const all = inputs.flatMap((i) => i.sessions);
  return { inputs: [{ name: `chain of ${all.length}`, sessions: [chainSessions(all, gapMs)] }], read };
}

const SESSION_FILE = /(\.jsonl|\.traj\.json)$/;

/** A folder's session files, sorted; subagent files that belong to a main session there come with it, not on their own. */
async function readSessionFolder(path: string): Promise<ReadInput[]> {
  const files = (await readdir(path)).filter((f) => SESSION_FILE.test(f)).sort();
  if (files.length === 0) throw new RhemaError("invalid_input", `${path}: neither a run directory (no manifest.json) nor a folder of session files (.jsonl, .traj.json)`);
  const out: ReadInput[] = [];
  const taken = new Set<string>();
  for (const f of files.filter((f) => !f.startsWith("agent-")).concat(files.filter((f) => f.startsWith("agent-")))) {
    const file = join(path, f);
    if (taken.has(file)) continue;
    const input = await readSessionFile(file, f, taken);
    out.push(input);
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** One session file in its detected format, with a Claude Code main session's subagents; `taken` collects the files read. */
async function readSessionFile(path: string, name: string, taken = new Set<string>()): Promise<ReadInput> {
  const text = await readText(path);
  taken.add(path);
  const format = located(() => detectSessionFormat(path, text));
  if (format === "corpus") return { name, format, sessions: [await readCorpusWithTimes(path, text)] };
  const sessions = located(() => parseSessionFile(path, text, null)).sessions;
  for (const s of sessions) s.name = s.name.replace(path, name);
  if (format !== "claude-code" || basename(path).startsWith("agent-")) return { name, format, sessions };
  for (const file of await subagentFiles(path, text)) {
    taken.add(file);
    const subText = await readText(file);
    const sub = located(() => parseClaudeCodeSession(file, subText));
    sub.name = `${name} › ${relative(dirname(path), file)}`;
    sessions.push(sub);
  }
  return { name, format, sessions };
}

/** A Claude Code main session's subagent logs: `<session>/subagents/agent-*.jsonl`, else `agent-*.jsonl` beside it with its `sessionId`. */
async function subagentFiles(path: string, text: string): Promise<string[]> {
  const folder = join(dirname(path), basename(path, ".jsonl"), "subagents");
  const nested = (await readdir(folder).catch(() => [] as string[])).filter((f) => /^agent-.*\.jsonl$/.test(f)).sort().map((f) => join(folder, f));
  const sessionId = firstJsonObjects(text, 20).find((v) => typeof v.sessionId === "string")?.sessionId;
  if (typeof sessionId !== "string") return nested;
  const beside: string[] = [];
  for (const f of (await readdir(dirname(path))).filter((f) => /^agent-.*\.jsonl$/.test(f)).sort()) {
    const file = join(dirname(path), f);
    const head = firstJsonObjects(await readText(file), 5);
    if (head.some((v) => v.sessionId === sessionId)) beside.push(file);
  }
  return [...nested, ...beside];
}

async function readCorpusWithTimes(path: string, text: string): Promise<ReplaySession> {
  const timesPath = path.replace(/\.jsonl$/, ".times.json");
  let times: Record<string, number> | null = null;
  const timesText = await readFile(timesPath, "utf8").catch(() => null);
  if (timesText !== null) {
    try {
      times = JSON.parse(timesText) as Record<string, number>;
    } catch (err) {
      throw new RhemaError("invalid_input", `${timesPath}: not JSON: ${(err as Error).message}`);
    }
  }
  return located(() => parseSessionFile(path, text, times)).sessions[0]!;
}

async function readText(path: string): Promise<string> {
  return readRegularFile(path).then((b) => b.toString("utf8"), (err: NodeJS.ErrnoException) => {
    throw new RhemaError("invalid_input", `${path}: cannot read (${err.code ?? err.message})`);
  });
}

/** A session file's format error as exit 2, naming the file and line. */
function located<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof CorpusFormatError) throw new RhemaError("invalid_input", err.message);
    throw err;
  }
}

async function isRunDir(path: string): Promise<boolean> {
  return stat(new RunDir(path).manifestPath).then(() => true, () => false);
}

/**
 * A run directory's sessions as one input per suite — per suite and matrix cell when the run had
 * variants (`triage@transcript=8k`), since each cell ran its sessions under its own settings.
 */
async function readRunDirInputs(path: string): Promise<ReadInput[]> {
  const byGroup = new Map<string, ReplaySession[]>();
  for (const recorded of await readRunDirSessions(path)) {
    const name = recorded.variant === null ? recorded.suite : `${recorded.suite}@${recorded.variant}`;
    const list = byGroup.get(name) ?? [];
    list.push(recorded.session);
    byGroup.set(name, list);
  }
  return [...byGroup].map(([name, sessions]) => ({ name, format: "rhema-run" as const, sessions }));
}
