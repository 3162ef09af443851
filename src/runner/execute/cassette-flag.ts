/**
 * `--cassette DIR`, `--cassette-mode` and `--cassette-usage` settled before a run starts (issue
 * 25): the folder is a folder (or nothing yet, when recording), the mode defaults to `strict` when
 * the folder holds cassettes, `record` when it holds none, and simulated usage is a replay's. Every problem is a `usage` error (exit 2) naming the path.
 */
import { lstat, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { RhemaError, errnoCode, errorMessage } from "../../core/errors.js";
import { CASSETTE_MODES, CASSETTE_USAGES, cassetteFilesUnder, type CassetteMode, type CassetteSettings, type CassetteUsage } from "./trial-cassette.js";

export function parseCassetteMode(value: string): CassetteMode {
  const mode = CASSETTE_MODES.find((m) => m === value);
  if (mode === undefined) throw new RhemaError("usage", `Expected --cassette-mode to be one of ${CASSETTE_MODES.join(", ")}, got "${value}"`);
  return mode;
}

function parseCassetteUsage(value: string): CassetteUsage {
  const usage = CASSETTE_USAGES.find((u) => u === value);
  if (usage === undefined) throw new RhemaError("usage", `Expected --cassette-usage to be one of ${CASSETTE_USAGES.join(", ")}, got "${value}"`);
  return usage;
}

/** The run's cassette settings, or null without `--cassette`. */
export async function settleCassette(flags: { cassette?: string; cassetteMode?: string; cassetteUsage?: string }, cwd: string): Promise<CassetteSettings | null> {
  if (flags.cassette === undefined) {
    for (const [given, flag] of [[flags.cassetteMode, "--cassette-mode"], [flags.cassetteUsage, "--cassette-usage"]] as const) {
      if (given !== undefined) throw new RhemaError("usage", `${flag} needs --cassette DIR (the folder of cassettes to record to or replay from)`);
    }
    return null;
  }
  const dir = resolve(cwd, flags.cassette);
  const asked = flags.cassetteMode === undefined ? null : parseCassetteMode(flags.cassetteMode);
  const usage = flags.cassetteUsage === undefined ? null : parseCassetteUsage(flags.cassetteUsage);
  const kind = await folderKind(dir, flags.cassette);
  if (kind === "absent" && asked !== null && asked !== "record" && asked !== "record-missing") {
    throw new RhemaError("usage", `--cassette ${flags.cassette}: no such folder to replay from (record into it first with --cassette-mode record)`);
  }
  const mode = asked ?? (kind === "folder" && (await holdsCassettes(dir, flags.cassette)) ? "strict" : "record");
  if (usage === "simulate" && mode === "record") throw new RhemaError("usage", "--cassette-usage simulate is for a replay: a recording reports the usage the model billed");
  return { dir, mode, ...(usage !== null ? { usage } : {}) };
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

/** Whether `dir` holds a cassette; a folder under it that cannot be read is an error naming it. */
async function holdsCassettes(dir: string, given: string): Promise<boolean> {
  try {
    return (await cassetteFilesUnder(dir, 1)).length > 0;
  } catch (err) {
    throw new RhemaError("usage", `--cassette ${given}: cannot be read (${errorMessage(err)})`);
  }
}
