/**
 * The calibration file: the factors of a calibrated token counter (tokens per character of each
 * content kind, framing per message and per tool block), where they were fitted from, and how
 * well they fit. JSON, `version: 1`, schema in schema/calibration.schema.json. Its `id` is a
 * hash of the factors alone (`calibrated:` and 16 hex digits), so a note edited in `fittedFrom`
 * keeps the id and changed factors never do. Pure: the CLI reads and writes the file.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { calibratedCounter, type CalibrationFactors, type TokenCounter } from "../core/token-counter.js";

export const CALIBRATION_VERSION = 1;

const factor = z.number().nonnegative().finite();
const errorFigures = z.object({
  requests: z.number().int().nonnegative(),
  /** (Σ predicted − Σ billed) ÷ Σ billed, in percent. */
  aggregateErrorPct: z.number().finite(),
  /** Mean of |predicted − billed| ÷ billed per request, in percent. */
  meanRequestErrorPct: z.number().finite(),
}).strict();

export const calibrationFileSchema = z.object({
  version: z.literal(CALIBRATION_VERSION),
  id: z.string().regex(/^calibrated:[0-9a-f]{16}$/).optional()
    .describe("calibrated:<16 hex digits of sha-256 over the factors>; checked on read when present"),
  fittedFrom: z.string().min(1).describe("what the factors were fitted on (or that they are a placeholder)"),
  factors: z.object({
    perChar: z.object({ prose: factor, code: factor, json: factor, tool_result: factor }).strict(),
    perMessage: factor,
    perToolBlock: factor,
  }).strict(),
  fit: z.object({
    sessions: z.number().int().nonnegative(),
    /** The fit's error on the requests it was fitted on (each session's first request excluded: the intercept makes it exact). */
    fitted: errorFigures,
    /** k-fold by session: each fold predicted by factors fitted on the other sessions; null with one session. */
    heldOut: errorFigures.extend({ folds: z.number().int().positive() }).nullable(),
    /** The kinds the samples held too little of to fit: they keep chars/4. */
    unfitted: z.array(z.enum(["prose", "code", "json", "tool_result"])),
  }).strict().nullable(),
}).strict();

export type CalibrationFile = z.infer<typeof calibrationFileSchema>;

/** A file that is not a calibration this rhema reads: names the field. */
export class CalibrationFileError extends Error {
  constructor(source: string, what: string) {
    super(`${source}: ${what}`);
    this.name = "CalibrationFileError";
  }
}

/** `calibrated:` + the first 16 hex digits of sha-256 over the factors in a fixed order. */
export function calibrationId(factors: CalibrationFactors): string {
  const { perChar: c } = factors;
  const canonical = JSON.stringify([c.prose, c.code, c.json, c.tool_result, factors.perMessage, factors.perToolBlock]);
  return `calibrated:${createHash("sha256").update(canonical).digest("hex").slice(0, 16)}`;
}

/** Parses a calibration file's text; `source` names it in errors. */
export function parseCalibration(text: string, source: string): CalibrationFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CalibrationFileError(source, `not JSON: ${(err as Error).message}`);
  }
  const version = typeof value === "object" && value !== null ? (value as { version?: unknown }).version : undefined;
  if (version !== CALIBRATION_VERSION) throw new CalibrationFileError(source, `field "version": expected ${CALIBRATION_VERSION}, got ${JSON.stringify(version)}`);
  const parsed = calibrationFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CalibrationFileError(source, `field "${issue.path.join(".") || "(top level)"}": ${issue.message}`);
  }
  const file = parsed.data;
  const id = calibrationId(file.factors);
  if (file.id !== undefined && file.id !== id) {
    throw new CalibrationFileError(source, `field "id": ${file.id} is not the hash of these factors (${id}); remove the id or refit`);
  }
  return { ...file, id };
}

/** The file's text as `bench calibrate` writes it (its id filled in). */
export function formatCalibration(file: Omit<CalibrationFile, "id">): string {
  return `${JSON.stringify({ version: file.version, id: calibrationId(file.factors), fittedFrom: file.fittedFrom, factors: file.factors, fit: file.fit }, null, 2)}\n`;
}

export function counterOfCalibration(file: CalibrationFile): TokenCounter {
  return calibratedCounter(calibrationId(file.factors), file.factors);
}

export function calibrationJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(calibrationFileSchema.meta({ title: "rhema calibration", description: "A calibrated token counter's factors (rhema bench calibrate)." }), { target: "draft-2020-12" }) as Record<string, unknown>;
}
