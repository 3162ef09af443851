/**
 * A count with its noun, singular or plural as the count asks: `1 task`, `2 tasks`, `0 tasks`,
 * `1 policy` / `3 policies`. Every line rhema shows a user counts this way, never `task(s)`.
 */

/** `n` and the noun: `one` for exactly 1, else `many` (default: `one` + "s"). */
export function counted(n: number, one: string, many: string = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
