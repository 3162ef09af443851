/**
 * Ripgrep for glob and grep: finding a binary (the `rg` on PATH, else the one the npm package
 * @vscode/ripgrep ships, else none: the tools then search in JavaScript), the flags that make it
 * list exactly what file-walk.ts lists, and running it with its output streamed as records.
 */
import { spawn } from "node:child_process";
import { access, constants, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CancelledError } from "../../core/errors.js";

/** Which search backend to use: find ripgrep, search in JavaScript, or use this binary. */
export type RipgrepChoice = "auto" | "js" | { binary: string };

/** Oldest `rg` on PATH taken: 13 has every flag in RG_SCOPE_ARGS (Debian 12 ships 13). */
const MIN_PATH_RG_MAJOR = 13;
const MAX_STDERR_CHARS = 4000;
/** A record (an output line) is kept up to this many bytes; the rest of it is dropped. */
const MAX_RECORD_BYTES = 256 * 1024;

/**
 * The flags that make rg walk like file-walk.ts: hidden files in, `.git` out, only the
 * `.gitignore` files inside the search root (the caller passes the inherited ones with
 * --ignore-file), outside a git repository too; symlinks are not followed by default.
 */
export const RG_SCOPE_ARGS: readonly string[] = [
  "--no-config", "--hidden", "--glob", "!.git", "--no-require-git", "--no-ignore-parent",
  "--no-ignore-dot", "--no-ignore-global", "--no-ignore-exclude", "--no-messages", "--color", "never",
];

/** Name globs rg's globset reads as picomatch does: these characters, commas only inside braces. */
const SIMPLE_NAME_GLOB = /^[A-Za-z0-9_.*?{},-]+$/;

/**
 * rg flags that keep only files whose name matches `nameGlob` (as a file type, which, unlike
 * --glob, does not override .gitignore), or none when the glob is not one both libraries read
 * alike. Only an optimisation: callers still filter rg's output themselves.
 */
export function ripgrepNameFilterArgs(nameGlob: string | undefined): string[] {
  if (nameGlob === undefined || !SIMPLE_NAME_GLOB.test(nameGlob)) return [];
  if (nameGlob.replace(/\{[^{}]*\}/g, "").includes(",")) return [];
  return ["--type-add", `rhemaglob:${nameGlob}`, "--type", "rhemaglob"];
}

/** Resolves the choice once and remembers it; null means "search in JavaScript". */
export function ripgrepLocator(choice: RipgrepChoice = "auto"): () => Promise<string | null> {
  let found: Promise<string | null> | undefined;
  return () => (found ??= locate(choice));
}

async function locate(choice: RipgrepChoice): Promise<string | null> {
  if (choice === "js") return null;
  if (choice !== "auto") return choice.binary;
  const major = await ripgrepMajorVersion("rg");
  if (major !== null && major >= MIN_PATH_RG_MAJOR) return "rg";
  return bundledRipgrep();
}

/** The rg from @vscode/ripgrep, or null when its platform package is not installed. */
export async function bundledRipgrep(): Promise<string | null> {
  try {
    const { rgPath } = await import("@vscode/ripgrep");
    await access(rgPath, constants.X_OK);
    return rgPath;
  } catch {
    return null;
  }
}

/** The major version `binary --version` reports, or null when it does not run. */
export async function ripgrepMajorVersion(binary: string): Promise<number | null> {
  return new Promise((resolvePromise) => {
    const child = spawn(binary, ["--version"], { stdio: ["ignore", "pipe", "ignore"] });
    // First: a spawn that fails (EMFILE) emits 'error' on the next tick, and has no stdout at all.
    child.on("error", () => resolvePromise(null));
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.on("close", (code) => {
      const m = /^ripgrep (\d+)\./.exec(out);
      resolvePromise(code === 0 && m ? Number(m[1]) : null);
    });
  });
}

export interface RipgrepRun {
  args: readonly string[];
  cwd: string;
  /**
   * Extra gitignore-style rules, relative to `cwd`. rg reads them from a private temp file
   * (0600, removed afterwards): Node's stdin for a child is a socket, which /dev/stdin cannot open.
   */
  ignoreRules?: string;
  /** The byte that ends each output record: NUL for `--files --null`, newline for matches. */
  separator: number;
  onRecord(record: string): void;
  signal: AbortSignal;
}

/** Runs rg to the end, feeding each output record to `onRecord`; resolves its exit code. */
export async function runRipgrep(binary: string, run: RipgrepRun): Promise<{ exitCode: number; stderr: string }> {
  if (run.signal.aborted) throw new CancelledError("search cancelled");
  if (!run.ignoreRules) return spawnRipgrep(binary, run.args, run);
  const dir = await mkdtemp(join(tmpdir(), "rhema-rg-"));
  try {
    const file = join(dir, "ignore");
    await writeFile(file, run.ignoreRules, { mode: 0o600 });
    return await spawnRipgrep(binary, ["--ignore-file", file, ...run.args], run);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function spawnRipgrep(binary: string, args: readonly string[], run: RipgrepRun): Promise<{ exitCode: number; stderr: string }> {
  const child = spawn(binary, [...args], { cwd: run.cwd, stdio: ["ignore", "pipe", "pipe"] });
  // Listened for first: a spawn that fails (EMFILE) emits 'error' on the next tick, and has no pipes.
  const finished = new Promise<number>((resolvePromise, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolvePromise(code ?? -1));
  });
  const onAbort = (): void => void child.kill("SIGKILL");
  run.signal.addEventListener("abort", onAbort, { once: true });
  const splitter = recordSplitter(run.separator, run.onRecord);
  child.stdout?.on("data", splitter.push);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    if (stderr.length < MAX_STDERR_CHARS) stderr += d;
  });
  try {
    const exitCode = await finished;
    if (run.signal.aborted) throw new CancelledError("search cancelled");
    splitter.end();
    return { exitCode, stderr: stderr.slice(0, MAX_STDERR_CHARS) };
  } finally {
    run.signal.removeEventListener("abort", onAbort);
  }
}

/** Splits a byte stream into records at `separator`, each cut at MAX_RECORD_BYTES. */
export function recordSplitter(separator: number, onRecord: (record: string) => void): { push(chunk: Buffer): void; end(): void } {
  let parts: Buffer[] = [];
  let kept = 0;
  const flush = (): void => {
    onRecord(Buffer.concat(parts).toString("utf8"));
    parts = [];
    kept = 0;
  };
  const keep = (piece: Buffer): void => {
    const room = MAX_RECORD_BYTES - kept;
    if (room <= 0 || piece.length === 0) return;
    const taken = piece.length > room ? piece.subarray(0, room) : piece;
    parts.push(Buffer.from(taken));
    kept += taken.length;
  };
  return {
    push(chunk: Buffer): void {
      let start = 0;
      for (let end = chunk.indexOf(separator); end !== -1; end = chunk.indexOf(separator, start)) {
        if (parts.length === 0) {
          onRecord(chunk.toString("utf8", start, Math.min(end, start + MAX_RECORD_BYTES)));
        } else {
          keep(chunk.subarray(start, end));
          flush();
        }
        start = end + 1;
      }
      keep(chunk.subarray(start));
    },
    end(): void {
      if (kept > 0) flush();
    },
  };
}

/** rg prints paths under "." as "./x": the workspace-relative form drops that. */
export function stripDotSlash(path: string): string {
  return path.startsWith("./") ? path.slice(2) : path;
}
