/**
 * The recorded sessions of a run directory, for `rhema bench replay`: each task's checkpointed
 * conversation and the times its model requests were sent (from its event log), as replay
 * sessions grouped by suite. Read-only: nothing in the run directory changes.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError } from "../../core/errors.js";
import { CheckpointStore } from "../../store/checkpoint-store.js";
import { sessionFromLog, type ReplaySession } from "../../transcript/replay-session.js";
import { readManifest } from "./run-manifest.js";

export interface RecordedSession {
  suite: string;
  id: string;
  session: ReplaySession;
}

export async function readRunDirSessions(runDir: string): Promise<RecordedSession[]> {
  const manifest = await readManifest(runDir);
  if (!manifest) throw new RhemaError("invalid_input", `${runDir}: not a run directory (no manifest.json)`);
  const out: RecordedSession[] = [];
  for (const task of manifest.tasks) {
    const dir = join(runDir, "tasks", task.suite, task.id);
    const session = await new CheckpointStore(dir).load();
    if (!session || session.messages.length === 0) continue;
    const times = await requestTimes(join(dir, "events.jsonl"));
    // The system prompt is rendered from the environment report; the replay counts the report.
    out.push({ suite: task.suite, id: task.id, session: sessionFromLog(`${task.suite}/${task.id}`, session.environment ?? null, session.messages, times) });
  }
  return out;
}

/** When each model request was sent, in milliseconds from the first. */
async function requestTimes(eventsPath: string): Promise<number[]> {
  const text = await readFile(eventsPath, "utf8").catch(() => "");
  const times: number[] = [];
  for (const line of text.split("\n")) {
    if (!line.includes('"type":"request"')) continue;
    try {
      const at = Date.parse((JSON.parse(line) as { at?: string }).at ?? "");
      if (Number.isFinite(at)) times.push(at);
    } catch {
      // a torn line: its request time is unknown, and the replay spaces it like one without times
    }
  }
  const first = times[0] ?? 0;
  return times.map((t) => t - first);
}
