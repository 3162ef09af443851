import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { chainSessions, parseCorpusSession } from "../../src/transcript/replay-session.js";
import { TranscriptMirror } from "../../src/transcript/transcript-mirror.js";
import { predictCut } from "../../src/transcript/compaction-plan.js";
const dir = "/work/shared/corpus/terminal-bench";
const names = readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort();
const s = chainSessions(names.map((f) => parseCorpusSession(f, readFileSync(join(dir, f), "utf8"), null)), 15000);
const m = new TranscriptMirror({ budgetTokens: 64000 });
for (const r of s.requests.slice(0, 200)) {
  const log = s.messages.slice(0, r.logLength);
  const plan = m.planFlush(log, 500, r.atMs);
  if (plan) { m.applyFlush(log, plan, "x".repeat(4000)); console.log("FLUSH", plan); }
  const shape = (m as any).shape(log, 0, 0);
  const v = m.view(log);
  console.log(r.logLength, "raw", shape.rawStart, "ends", shape.sectionEnds.join(","), "pred", predictCut(shape, m.settings), "bp", v.cacheBreakpoints.join(","), "view", m.viewTokens(v.messages, 0));
}
