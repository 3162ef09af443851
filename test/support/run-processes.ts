/**
 * Finding the processes a run left alive, by walking /proc: those whose command line or
 * environment carries a marker the test gave the run (an unsandboxed command inherits the
 * runner's environment; a sandboxed one gets it back through bwrap's `--setenv`, which its
 * command line shows), and those whose working folder lies under the run's own folder (what a
 * cleared environment hides, and rhema's own helpers that keep no environment). Zombies are dead
 * and not counted; this process is never one of them.
 */
import { readFile, readdir, readlink } from "node:fs/promises";
import { sep } from "node:path";

export interface RunProcessQuery {
  /** A string found in the command line or the environment of every process of the run. */
  mark?: string;
  /** A folder: a process working in it or below it belongs to the run. */
  cwdUnder?: string;
}

export interface LiveProcess {
  pid: number;
  /** The command line, arguments separated by spaces. */
  cmdline: string;
  /** What tied it to the run. */
  why: "mark" | "cwd";
}

/** The live (not zombie) processes of the run, by pid. */
export async function liveRunProcesses(query: RunProcessQuery): Promise<LiveProcess[]> {
  const read = (pid: string, file: string) => readFile(`/proc/${pid}/${file}`, "latin1").catch(() => "");
  const pids = (await readdir("/proc")).filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid);
  const found = await Promise.all(pids.map(async (pid): Promise<LiveProcess | null> => {
    const cmdline = await read(pid, "cmdline");
    const why = await tiedBy(query, pid, cmdline, read);
    if (why === null) return null;
    const stat = await read(pid, "stat");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    if (state === "" || state === "Z") return null;
    return { pid: Number(pid), cmdline: cmdline.replaceAll("\0", " ").trim(), why };
  }));
  return found.filter((p): p is LiveProcess => p !== null).sort((a, b) => a.pid - b.pid);
}

async function tiedBy(query: RunProcessQuery, pid: string, cmdline: string, read: (pid: string, file: string) => Promise<string>): Promise<LiveProcess["why"] | null> {
  if (query.mark !== undefined && (cmdline.includes(query.mark) || (await read(pid, "environ")).includes(query.mark))) return "mark";
  if (query.cwdUnder !== undefined) {
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => "");
    if (cwd === query.cwdUnder || cwd.startsWith(query.cwdUnder + sep)) return "cwd";
  }
  return null;
}

/**
 * Waits until no process of the run is alive, or `limitMs` passed: what is still alive then
 * (empty when the run left nothing behind). Polls every `everyMs`.
 */
export async function survivorsAfter(query: RunProcessQuery, limitMs: number, everyMs = 50): Promise<LiveProcess[]> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const alive = await liveRunProcesses(query);
    if (alive.length === 0 || Date.now() >= deadline) return alive;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** SIGKILLs each process (and its group, when it leads one): cleaning up after a failed check. */
export function killAll(processes: readonly LiveProcess[]): void {
  for (const p of processes) {
    for (const target of [-p.pid, p.pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // gone, or no group of that id
      }
    }
  }
}
