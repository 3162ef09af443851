/** A small Claude Code session with bills, and the simulator's error on it counted by hand (test/transcript/replay-recorded.test.ts shows the count). */
/**
 * Three requests of a Claude Code session, the third after an idle gap of 6 minutes (past the
 * 5-minute TTL). Text of four characters is one token, a message's framing four.
 */
export function threeRequestSession(): string {
  const usage = (input: number, read: number, write: number) => ({ input_tokens: input, cache_read_input_tokens: read, cache_creation_input_tokens: write, output_tokens: 1 });
  const line = (type: string, uuid: string, parent: string | null, at: string, message: object) => JSON.stringify({ type, uuid, parentUuid: parent, timestamp: at, isSidechain: false, sessionId: "s", message });
  const user = (text: string) => ({ role: "user", content: text });
  const reply = (id: string, text: string, u: object) => ({ id, role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text }], usage: u });
  return [
    line("user", "u1", null, "2026-01-05T10:00:00Z", user("hello")),
    line("assistant", "a1", "u1", "2026-01-05T10:00:00Z", reply("m1", "abcd", usage(3, 0, 2000))),
    line("user", "u2", "a1", "2026-01-05T10:00:09Z", user("next")),
    line("assistant", "a2", "u2", "2026-01-05T10:00:10Z", reply("m2", "wxyz", usage(5, 2003, 20))),
    line("user", "u3", "a2", "2026-01-05T10:06:05Z", user("more")),
    line("assistant", "a3", "u3", "2026-01-05T10:06:10Z", reply("m3", "done", usage(2, 0, 2030))),
  ].join("\n");
}

/** The simulator's error on that session, by hand (see the comments in the test). */
export const HAND_COMPUTED = {
  billedRequests: 3,
  simulated: { inputTokens: 0, cacheReadTokens: 2003, cacheWriteTokens: 2003 + 10 + 2023, cacheWrite1hTokens: 0, hitRate: 2003 / 6039, billedEquivalent: 1.25 * 4036 + 0.1 * 2003 },
  billed: { inputTokens: 10, cacheReadTokens: 2003, cacheWriteTokens: 4050, cacheWrite1hTokens: 0, hitRate: 2003 / 6063, billedEquivalent: 10 + 1.25 * 4050 + 0.1 * 2003 },
  cacheReadErrorPct: 0,
  cacheWriteErrorPct: ((4036 - 4050) / 4050) * 100,
  inputErrorPct: -100,
  hitRateErrorPoints: (2003 / 6039 - 2003 / 6063) * 100,
  billedEquivalentRatio: (1.25 * 4036 + 0.1 * 2003) / (10 + 1.25 * 4050 + 0.1 * 2003),
};
