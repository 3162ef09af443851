/**
 * The recorded sessions of a run directory, for `rhema bench replay`: each task's checkpointed
 * conversation and the times its model requests were sent, as replay sessions. Read-only:
 * nothing in the run directory changes.
 */
import { RhemaError } from "../../core/errors.js";
import { sessionFromLog, type ReplaySession } from "../../transcript/replay-session.js";
import { RunDir } from "./run-dir.js";

export interface RecordedSession {
  suite: string;
  id: string;
  session: ReplaySession;
}

export async function readRunDirSessions(path: string): Promise<RecordedSession[]> {
  const runDir = new RunDir(path);
  const manifest = await runDir.readManifest();
  if (!manifest) throw new RhemaError("invalid_input", `${path}: not a run directory (no manifest.json)`);
  const out: RecordedSession[] = [];
  for (const ref of manifest.tasks) {
    const task = runDir.task(ref);
    const session = await task.openCheckpoint().load();
    if (!session || session.messages.length === 0) continue;
    const times = await task.readRequestTimes();
    // The system prompt is rendered from the environment report; the replay counts the report.
    out.push({ suite: ref.suite, id: ref.id, session: sessionFromLog(`${ref.suite}/${ref.id}`, session.environment ?? null, session.messages, times) });
  }
  return out;
}
