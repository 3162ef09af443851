import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { PromptCacheSimulator } from "../../src/cache/prompt-cache-simulator.js";
import { chainSessions, parseCorpusSession } from "../../src/transcript/replay-session.js";
import { replaySession } from "../../src/transcript/replay.js";
import type { StrategyName } from "../../src/transcript/compaction-plan.js";
const dir = "/work/shared/corpus/terminal-bench";
const names = readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort();
const sessions = names.map((f) => parseCorpusSession(f, readFileSync(join(dir, f), "utf8"), JSON.parse(readFileSync(join(dir, f.replace(/\.jsonl$/, ".times.json")), "utf8"))));
const chained = chainSessions(sessions, 15_000);
const budget = Number(process.env.B ?? 32000);
const extra = process.env.X ? JSON.parse(process.env.X) : {};
for (const strategy of (process.env.S ?? "sections,keep-recent,summarize-all").split(",") as StrategyName[]) {
  const sim = new PromptCacheSimulator({ rules: "anthropic" });
  let big = 0, bigTok = 0;
  const f = replaySession(chained, { observe: (req, at) => { const u = sim.observe(req, at); if (u.cacheWriteTokens + u.inputTokens > 3000) { big++; bigTok += u.cacheWriteTokens + u.inputTokens; if (process.env.V) console.log(`  t=${(at/1000).toFixed(0)} msgs=${req.messages.length} bp=${req.cacheBreakpoints.join(",")} in=${u.inputTokens} read=${u.cacheReadTokens} write=${u.cacheWriteTokens}`); } return u; } }, { strategy, budgetTokens: budget, ...(strategy === "sections" || process.env.ALL ? extra : {}) });
  console.log(strategy.padEnd(14), "hit", f.hitRate.toFixed(4), "flush", f.flushes, "merge", f.summaryMerges, "ret", f.retainedContext.toFixed(3), "billed", Math.round(f.billedEquivalent), "worker", Math.round(f.workerBilledEquivalent), "cpr", Math.round(f.costPerRetained), "waste", Math.round(f.rewriteWaste), "tail", f.minRawTailShare?.toFixed(3), "bigWrites", big, bigTok);
}
