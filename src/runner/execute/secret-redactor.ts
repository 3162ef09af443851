/**
 * Keeps secrets out of what the runner writes: values of environment variables whose names
 * look secret are replaced by `[redacted:NAME]` in event logs, results and reports. The shell
 * tool already hides them from commands; this catches a secret that reaches output anyway
 * (read from a file, printed by a check). "Looks secret" is the shell tool's own rule
 * (src/tools/secret-env), so what a command cannot see is exactly what gets redacted.
 */
import { looksSecret } from "../../process/secret-env.js";

/** Shorter values are too likely to occur by chance to replace. */
const MIN_SECRET_LENGTH = 8;

export class SecretRedactor {
  private readonly secrets: Array<{ name: string; value: string }>;

  /** `env` is handed in by the CLI edge; nothing below it reads process.env. */
  constructor(env: Readonly<Record<string, string | undefined>>) {
    this.secrets = Object.entries(env)
      .filter((e): e is [string, string] => typeof e[1] === "string" && e[1].length >= MIN_SECRET_LENGTH && looksSecret(e[0], e[1]))
      .map(([name, value]) => ({ name, value }))
      .sort((a, b) => b.value.length - a.value.length);
  }

  redact(text: string): string {
    let out = text;
    for (const { name, value } of this.secrets) if (out.includes(value)) out = out.split(value).join(`[redacted:${name}]`);
    return out;
  }

  /**
   * Redacts every string (and object key) inside a JSON-shaped value; returns a copy.
   * Walked rather than redacted as JSON text: in that text a secret holding `"` or `\` is
   * escaped, and would be missed.
   */
  redactValue<T>(value: T): T {
    if (this.secrets.length === 0) return value;
    return this.redactWalk(value) as T;
  }

  private redactWalk(value: unknown): unknown {
    if (typeof value === "string") return this.redact(value);
    if (Array.isArray(value)) return value.map((item) => this.redactWalk(item));
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [this.redact(key), this.redactWalk(item)]));
    }
    return value;
  }
}
