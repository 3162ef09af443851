/**
 * `--cassette DIR` and `--cassette-mode` settled before a run starts (issue 25): the folder is a
 * folder (or nothing yet, when recording), and the mode defaults to `strict` when the folder holds
 * cassettes, `record` when it holds none. Every problem is a `usage` error (exit 2) naming the path.
 */
import { lstat, readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { RhemaError, errnoCode, errorMessage } from "../../core/errors.js";
import { CASSETTE_MODES, type CassetteMode, type CassetteSettings } from "./trial-cassette.js";

export function parseCassetteMode(value: string): CassetteMode {
  const mode = CASSETTE_MODES.find((m) => m === value);
  if (mode === undefined) throw new RhemaError("usage", `Expected --cassette-mode to be one of ${CASSETTE_MODES.join(", ")}, got "${value}"`);
  return mode;
}

/** The run's cassette settings, or null without `--cassette`. */
export async function settleCassette(flags: { cassette?: string; cassetteMode?: string }, cwd: string): Promise<CassetteSettings | null> {
  if (flags.cassette === undefined) {
    if (flags.cassetteMode !== undefined) throw new RhemaError("usage", "--cassette-mode needs --cassette DIR (the folder of cassettes to record to or replay from)");
    return null;
  }
  const dir = resolve(cwd, flags.cassette);
  const asked = flags.cassetteMode === undefined ? null : parseCassetteMode(flags.cassetteMode);
  const kind = await folderKind(dir, flags.cassette);
  if (kind === "absent") {
    if (asked !== null && asked !== "record" && asked !== "record-missing") {
      throw new RhemaError("usage", `--cassette ${flags.cassette}: no such folder to replay from (record into it first with --cassette-mode record)`);
    }
    return { dir, mode: asked ?? "record" };
  }
  return { dir, mode: asked ?? ((await holdsCassettes(dir)) ? "strict" : "record") };
}

async function folderKind(dir: string, given: string): Promise<"absent" | "folder"> {
  let info;
  try {
    info = await stat(dir);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT") {
      // A link to nothing is not an absent folder to make: mkdir would fail on it later, mid-run.
      if (await lstat(dir).then(() => true, () => false)) throw new RhemaError("usage", `--cassette ${given}: a link to nothing`);
      return "absent";
    }
    throw new RhemaError("usage", `--cassette ${given}: cannot be read (${errorMessage(err)})`);
  }
  if (!info.isDirectory()) throw new RhemaError("usage", `--cassette ${given}: ${describeKind(info)}, not a folder`);
  return "folder";
}

function describeKind(info: { isFile(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean }): string {
  if (info.isFile()) return "a file";
  if (info.isFIFO()) return "a FIFO";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  if (info.isSocket()) return "a socket";
  return "not a file or folder";
}

/** Whether some `.jsonl` file lies under `dir` (suite/id/variant/n.jsonl), looked for breadth-first. */
async function holdsCassettes(dir: string): Promise<boolean> {
  let level = [dir];
  for (let depth = 0; depth < 4 && level.length > 0; depth++) {
    const next: string[] = [];
    for (const folder of level) {
      const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        if (depth === 3 && entry.isFile() && entry.name.endsWith(".jsonl")) return true;
        if (depth < 3 && entry.isDirectory()) next.push(join(folder, entry.name));
      }
    }
    level = next;
  }
  return false;
}
