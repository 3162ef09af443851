/**
 * The samples file `rhema bench calibrate` reads besides run directories: JSON lines, one
 * request a line, `{session, system, tools, messages, billed}` — the request's content as sent
 * and the usage it was billed (`billed`: rhema's `Usage`, cached tokens apart). Any importer
 * that can say what was sent and billed can write it. Pure: the CLI reads the file.
 */
import { z } from "zod";
import { messageSchema } from "../core/session.js";
import type { CalibrationSample } from "./calibration-fit.js";

const count = z.number().int().nonnegative();
const sampleSchema = z.object({
  session: z.string().min(1),
  system: z.string().nullable(),
  tools: z.array(z.unknown()),
  messages: z.array(messageSchema),
  billed: z.object({ inputTokens: count, cacheReadTokens: count, cacheWriteTokens: count, outputTokens: count, cacheWrite1hTokens: count.optional() }).passthrough(),
}).strict();

/** A line that is not a sample: names the line and the field. */
export class SamplesFormatError extends Error {
  constructor(source: string, line: number, what: string) {
    super(`${source}:${line}: ${what}`);
    this.name = "SamplesFormatError";
  }
}

export function parseSamplesJsonl(text: string, source: string): CalibrationSample[] {
  const out: CalibrationSample[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new SamplesFormatError(source, i + 1, `not JSON: ${(err as Error).message}`);
    }
    const parsed = sampleSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new SamplesFormatError(source, i + 1, `field "${issue.path.join(".") || "(top level)"}": ${issue.message}`);
    }
    out.push(parsed.data as CalibrationSample);
  }
  return out;
}
