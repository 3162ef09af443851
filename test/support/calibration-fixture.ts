/**
 * Requests with billed prompt tokens for the calibration tests, built from this repository's
 * own files: each session reads a few source files (line-numbered, as the read tool returns
 * them), edits one (a JSON tool call), and talks in prose. "Billed" is what a provider with a
 * real tokenizer would bill — o200k_base's count of the request, plus a hidden per-session
 * prefix (the system prompt and tools a real log leaves out) — so the fit meets the real
 * non-linearity of a tokenizer, not a model of its own making.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "../../src/core/messages.js";
import type { TokenCounter } from "../../src/core/token-counter.js";
import type { CalibrationSample } from "../../src/tokens/calibration-fit.js";
import { repoRoot } from "./paths.js";

const PROSE = [
  "The totals in the ledger report are off by one cent when a refund is split across two invoices; find where the rounding happens and fix it without changing the report's format.",
  "I read the module. The rounding happens per line instead of per invoice, which is why a split refund loses a cent. I will move it to the invoice total.",
  "Now the tests pass. Summary: rounding moved from each line to the invoice total; no format change.",
];

/** `sessions` sessions of about `steps` requests each, counted by `truth` plus a hidden prefix. */
export function billedFixture(truth: TokenCounter, sessions = 8, steps = 6): CalibrationSample[] {
  const files = readdirSync(join(repoRoot, "src/transcript")).filter((f) => f.endsWith(".ts")).sort()
    .concat(readdirSync(join(repoRoot, "src/cache")).filter((f) => f.endsWith(".ts")).sort().map((f) => `../cache/${f}`));
  const samples: CalibrationSample[] = [];
  for (let s = 0; s < sessions; s++) {
    const hiddenPrefix = 15_000 + 731 * s;
    const messages: Message[] = [{ role: "user", content: [{ type: "text", text: PROSE[0]! }] }];
    for (let k = 0; k < steps; k++) {
      const file = files[(s * 3 + k) % files.length]!;
      const source = readFileSync(join(repoRoot, "src/transcript", file), "utf8").slice(0, 3_000 + 500 * k);
      const numbered = source.split("\n").map((line, i) => `${String(i + 1).padStart(6)}\t${line}`).join("\n");
      const id = `c${s}_${k}`;
      const call = k % 3 === 2
        ? { type: "tool_call" as const, id, name: "edit_file", input: { path: file, old_string: source.slice(0, 200), new_string: source.slice(200, 420) } }
        : { type: "tool_call" as const, id, name: "read_file", input: { path: file } };
      const request = messages.slice();
      const billedTokens = hiddenPrefix + request.reduce((n, m) => n + truth.message(m), 0);
      samples.push({ session: `s${s}`, system: null, tools: [], messages: request, billed: { inputTokens: 3, cacheReadTokens: billedTokens - 3, cacheWriteTokens: 0, outputTokens: 50 } });
      const said = k % 2 === 1 ? `The part to change:\n\`\`\`ts\n${source.slice(500, 500 + 300 * k)}\n\`\`\`` : PROSE[1 + (k % 2)]!;
      messages.push({ role: "assistant", content: [{ type: "text", text: said }, call] });
      messages.push({ role: "user", content: [{ type: "tool_result", callId: id, content: k % 3 === 2 ? "edited" : numbered }] });
    }
  }
  return samples;
}
