/**
 * The requests of a session that carry the provider's bill, each as it was sent — for fitting
 * token factors against real counts (a calibration): the visible prompt, the hidden prefix's
 * size, the bill and the model.
 */
import type { Message } from "../../core/messages.js";
import type { Usage } from "../../core/provider.js";
import type { ToolSpec } from "../../core/tool.js";
import { sentMessages, type ReplaySession } from "../replay-session.js";

export interface BilledSample {
  system: string | null;
  tools: ToolSpec[];
  /** What the request carried (after the harness's own compaction, when it compacted). */
  messages: Message[];
  /** Tokens the request carried that the log does not show (0: none). */
  prefixTokens: number;
  billed: Usage;
  model?: string;
}

export function billedSamples(session: ReplaySession): BilledSample[] {
  return session.requests.flatMap((r) => (r.billed
    ? [{
      system: session.system, tools: session.tools, messages: sentMessages(session, r),
      prefixTokens: session.prefixTokens ?? 0, billed: r.billed, ...(r.model ? { model: r.model } : {}),
    }]
    : []));
}
