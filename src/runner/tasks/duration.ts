/**
 * Durations as task files write them (`10m`, `90s`, `1h`, `1500ms`, or a bare number of
 * seconds) and as reports show them (`1m 05s`); and limits, which also take `none` (no limit, read
 * as an infinite duration). Any finite duration is kept as it is (`1000h` included: timers take it
 * through core/long-timer.ts). Pure functions; no clock.
 */

/** The string form a task file accepts: an integer or decimal, then `ms`, `s`, `m` or `h`. */
export const DURATION_PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/**
 * Milliseconds for a task-file duration, or null when `value` is not one: a positive number
 * is seconds, a string must match `DURATION_PATTERN`. Results are rounded to whole
 * milliseconds; zero and negative durations are refused (a limit of nothing is a mistake).
 */
export function parseDurationMs(value: string | number): number | null {
  if (typeof value === "number") {
    return Number.isFinite(value) && value > 0 ? Math.round(value * 1_000) : null;
  }
  const match = DURATION_PATTERN.exec(value.trim());
  if (!match) return null;
  const ms = Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
  return ms > 0 && Number.isFinite(ms) ? ms : null;
}

/** What a limit (`--timeout`, `limits.timeout`, `--stream-idle`, …) takes for "no limit". */
export const NO_LIMIT = "none";

/**
 * Milliseconds for a limit: a duration as `parseDurationMs` reads it, or `Infinity` for `none`
 * (a timer started with it never fires); null when `value` is neither.
 */
export function parseLimitMs(value: string | number): number | null {
  if (typeof value === "string" && value.trim() === NO_LIMIT) return Infinity;
  return parseDurationMs(value);
}

/** A bare number as a flag or input gives it (`2`, `1.5`): seconds, as a number in a task file is. */
const BARE_SECONDS_PATTERN = /^\d+(?:\.\d+)?$/;

/**
 * Milliseconds for a limit given as text (`--timeout`, `--stream-idle`, the Action's inputs):
 * what `limits.timeout` takes in a task file, read the same way — a bare number is seconds
 * (`--timeout 2` is `limits.timeout: 2`), else a duration or `none` as `parseLimitMs` reads it.
 */
export function parseLimitText(text: string): number | null {
  const trimmed = text.trim();
  return BARE_SECONDS_PATTERN.test(trimmed) ? parseDurationMs(Number(trimmed)) : parseLimitMs(trimmed);
}

/** How a limit's text is described when it is not one, after "Expected X as". */
export const LIMIT_TEXT_RULE = "a duration like 90s, 10m or 1h, a number of seconds, or none";

/**
 * A short human reading of a duration: `850ms`, `12.3s`, `4m 05s`, `2h 03m`.
 * Negative input is shown as zero.
 */
export function formatDurationMs(ms: number): string {
  const safe = Math.max(0, Math.round(ms));
  if (safe < 1_000) return `${safe}ms`;
  if (safe < 60_000) return `${(Math.floor(safe / 100) / 10).toFixed(1)}s`;
  const totalSeconds = Math.floor(safe / 1_000);
  if (totalSeconds < 3_600) {
    return `${Math.floor(totalSeconds / 60)}m ${pad2(totalSeconds % 60)}s`;
  }
  const totalMinutes = Math.floor(totalSeconds / 60);
  return `${Math.floor(totalMinutes / 60)}h ${pad2(totalMinutes % 60)}m`;
}

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}
