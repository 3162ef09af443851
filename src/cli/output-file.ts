/**
 * A text file a command writes where it is told (`--out`, `--json`, `--chart`): atomically (temp
 * file, rename), or into a device, FIFO or link (`/dev/stdout`), which is never renamed over.
 */
import { open, rm } from "node:fs/promises";
import writeFileAtomic from "write-file-atomic";
import { RhemaError } from "../core/errors.js";
import { probeInto, reportDestination, writeInto } from "../runner/reports/report-destination.js";
import { canonicalPath, isWithinOrSame } from "../runner/tasks/canonical-path.js";

export async function writeOutputFile(path: string, text: string): Promise<void> {
  if ((await reportDestination(path)) === "into") await writeInto(path, text, { append: false });
  else await writeFileAtomic(path, text);
}

/**
 * Checks before any work that an output file can be written where it is asked for, as `run`
 * checks its report copies: not a folder, its folder there (a missing one is not made), a file
 * creatable beside it. Nothing is left behind. Call inside `guardOutput` for the exit-3 message.
 */
export async function probeOutputFile(path: string, pid: number): Promise<void> {
  if ((await reportDestination(path)) === "into") return probeInto(path);
  const probe = `${path}.rhema-probe-${pid}`;
  await (await open(probe, "w")).close();
  await rm(probe, { force: true });
}

/** `flag`'s file is not written into what the command reads (by real path: a link to an input is that input). */
export async function checkOutputApart(flag: string, path: string, inputs: readonly string[]): Promise<void> {
  const real = await canonicalPath(path);
  for (const input of inputs) {
    if (isWithinOrSame(await canonicalPath(input), real)) throw new RhemaError("usage", `${flag} ${path} is${real === path ? "" : ` (by its real path ${real})`} in the input ${input}: write it elsewhere`);
  }
}
