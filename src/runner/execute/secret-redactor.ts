/**
 * Keeps secrets out of what the runner writes: values of environment variables whose names
 * look secret are replaced by `[redacted:NAME]` in event logs, results and reports. The shell
 * tool already hides them from commands; this catches a secret that reaches output anyway
 * (read from a file, printed by a check). Which values are secrets is the shell tool's own rule
 * (src/process/secret-env `isSecretValue`), so what a command cannot see is what gets redacted.
 *
 * A secret is also found in its common encodings (`[redacted:NAME:base64]` and so on): base64
 * and base64url, padded and not; hex, lower and upper case; URL-encoding (`%2F` or `%2f`, `+` or
 * `%20` for a space). Inside a longer base64 text the secret's encoding depends on where its
 * first byte falls in a 3-byte group, so each of the three alignments is matched by its stable
 * middle — the characters that only the secret's own bits decide (the first one or two and the
 * last are shared with the neighbouring bytes, and stay). A middle shorter than
 * `MIN_FRAGMENT_LENGTH` would match by chance in any long base64 text and is not used.
 */
import { isSecretValue } from "../../process/secret-env.js";

/** The shortest base64 middle matched inside longer base64 text: 48 bits of the secret. */
export const MIN_FRAGMENT_LENGTH = 8;

/** One written form of a secret and what replaces it. */
interface SecretForm {
  text: string;
  label: string;
}

export class SecretRedactor {
  private readonly labels = new Map<string, string>();
  private readonly pattern: RegExp | null;

  /** `env` is handed in by the CLI edge; nothing below it reads process.env. */
  constructor(env: Readonly<Record<string, string | undefined>>) {
    const forms: SecretForm[] = [];
    for (const [name, value] of Object.entries(env)) if (isSecretValue(name, value)) forms.push(...secretForms(name, value));
    // Longest first: at one position the alternation takes the first form that matches, so a
    // secret that contains another (or an encoding that contains a shorter one) is hidden whole.
    forms.sort((a, b) => b.text.length - a.text.length);
    for (const form of forms) if (!this.labels.has(form.text)) this.labels.set(form.text, form.label);
    this.pattern = this.labels.size === 0 ? null : new RegExp([...this.labels.keys()].map(escapeRegExp).join("|"), "g");
  }

  redact(text: string): string {
    if (this.pattern === null) return text;
    return text.replace(this.pattern, (found) => this.labels.get(found) ?? found);
  }

  /**
   * Redacts every string (and object key) inside a JSON-shaped value; returns a copy.
   * Walked rather than redacted as JSON text: in that text a secret holding `"` or `\` is
   * escaped, and would be missed.
   */
  redactValue<T>(value: T): T {
    if (this.pattern === null) return value;
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

/** Every form of `value` the redactor looks for, the value itself first; no duplicates. */
export function secretForms(name: string, value: string): SecretForm[] {
  const bytes = Buffer.from(value, "utf8");
  const base64 = bytes.toString("base64");
  const base64url = bytes.toString("base64url");
  const url = encodeURIComponent(value);
  const candidates: Array<[string, string]> = [
    [value, ""],
    [base64, "base64"], [base64.replace(/=+$/, ""), "base64"],
    [`${base64url}${"=".repeat((4 - (base64url.length % 4)) % 4)}`, "base64url"], [base64url, "base64url"],
    [bytes.toString("hex"), "hex"], [bytes.toString("hex").toUpperCase(), "hex"],
    [url, "url"], [url.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()), "url"], [url.replace(/%20/g, "+"), "url"],
  ];
  for (const shift of [0, 1, 2]) {
    for (const middle of base64Middles(bytes, shift)) if (middle.length >= MIN_FRAGMENT_LENGTH) candidates.push([middle, "base64"]);
  }
  const seen = new Set<string>();
  const forms: SecretForm[] = [];
  for (const [text, encoding] of candidates) {
    if (text === "" || seen.has(text)) continue;
    seen.add(text);
    forms.push({ text, label: encoding === "" ? `[redacted:${name}]` : `[redacted:${name}:${encoding}]` });
  }
  return forms;
}

/**
 * The base64 and base64url characters that `bytes` alone decide when they sit `shift` bytes
 * (0–2) into a 3-byte group of a longer text: each character holds 6 bits, so those holding a
 * bit of the bytes before (the first ⌈8·shift/6⌉) or after (past ⌊8·(shift+n)/6⌋) are dropped.
 */
export function base64Middles(bytes: Buffer, shift: number): [string, string] {
  const padded = Buffer.concat([Buffer.alloc(shift), bytes]);
  const from = Math.ceil((8 * shift) / 6);
  const to = Math.floor((8 * padded.length) / 6);
  return [padded.toString("base64").slice(from, to), padded.toString("base64url").slice(from, to)];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
