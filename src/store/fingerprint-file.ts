/**
 * The fingerprint file beside a checkpoint: the workspace fingerprint of the call that started
 * last (`{callId, fingerprint}`), kept out of the journal lines so that a boundary's record
 * stays the size of what it added. Calls run one at a time, so one file suffices; it is written
 * (atomically, 0600) before the call's `started` record, so a durable `started` always finds
 * its fingerprint. A missing, torn or foreign file only loses the "what changed" list.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { fingerprintSchema, type WorkspaceFingerprint } from "../core/session.js";
import { writePrivateFileAtomic } from "./private-files.js";

const fileSchema = z.object({ callId: z.string().min(1), fingerprint: fingerprintSchema }).strict();

export function saveFingerprint(path: string, callId: string, fingerprint: WorkspaceFingerprint): Promise<void> {
  return writePrivateFileAtomic(path, JSON.stringify({ callId, fingerprint }) + "\n");
}

/** The fingerprint recorded for `callId`, or undefined when the file holds none for it. */
export async function loadFingerprint(path: string, callId: string): Promise<WorkspaceFingerprint | undefined> {
  const text = await readFile(path, "utf8").catch(() => null);
  if (text === null) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = fileSchema.safeParse(value);
  return parsed.success && parsed.data.callId === callId ? parsed.data.fingerprint : undefined;
}
