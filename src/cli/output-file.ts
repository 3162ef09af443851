/**
 * A text file a command writes where it is told (`--out`, `--json`, `--chart`): atomically (temp
 * file, rename), or into a device, FIFO or link (`/dev/stdout`), which is never renamed over.
 */
import writeFileAtomic from "write-file-atomic";
import { reportDestination, writeInto } from "../runner/reports/report-destination.js";

export async function writeOutputFile(path: string, text: string): Promise<void> {
  if ((await reportDestination(path)) === "into") await writeInto(path, text, { append: false });
  else await writeFileAtomic(path, text);
}
