/**
 * Keeps secrets out of everything rhema writes and prints: values of environment variables
 * whose names look secret are replaced by `[redacted:NAME]` in event logs, checkpoints, results,
 * reports, the progress view, `--json` lines and messages. One rule (this class, built once per
 * run from the edge's environment) serves every file and every stream. The shell tool already
 * hides the variables from commands; this catches a secret that reaches output anyway (read from
 * a file, printed by a check, echoed by a provider's error, written by the model). Which values
 * are secrets is the shell tool's own rule (src/process/secret-env `isSecretValue`), so what a
 * command cannot see is what gets redacted.
 *
 * A secret is found in the forms programs print it in (secret-forms.ts): its common encodings
 * (base64, hex, URL-encoding, …), the ways it is escaped inside JSON, shell and XML text, and —
 * for a value of several lines, such as a PEM key — each line where it appears alone. Each form
 * is replaced by its labelled mark (`[redacted:NAME:json]` and so on).
 *
 * Redacting is idempotent: a mark already in the text is left as it is (a checkpoint's last
 * message is redacted again at each boundary, and a secret may itself be a word of a mark).
 * Text that arrives in pieces (the model's streamed deltas) goes through `textStream`, which
 * holds back what could still be the start of a secret.
 */
import { isSecretValue } from "../../process/secret-env.js";
import { secretForms, type SecretForm } from "./secret-forms.js";

export { MIN_FRAGMENT_LENGTH, MIN_LINE_LENGTH, base64Middles, secretForms } from "./secret-forms.js";

/** A mark this redactor (or an earlier run's) wrote: left alone, so redacting twice changes nothing. */
const MARK_SOURCE = String.raw`\[redacted:[^\]\s]{1,128}\]`;
/** The longest mark `MARK_SOURCE` matches: a stream holds back at least this much. */
const MAX_MARK_LENGTH = "[redacted:]".length + 128;

export class SecretRedactor {
  private readonly labels = new Map<string, string>();
  private readonly pattern: RegExp | null;
  /** The longest text the pattern can match. */
  private readonly longest: number;

  /** `env` is handed in by the edge; nothing below it reads process.env. */
  constructor(env: Readonly<Record<string, string | undefined>>) {
    const forms: SecretForm[] = [];
    for (const [name, value] of Object.entries(env)) if (isSecretValue(name, value)) forms.push(...secretForms(name, value));
    // Longest first: at one position the alternation takes the first form that matches, so a
    // secret that contains another (or an encoding that contains a shorter one) is hidden whole.
    forms.sort((a, b) => b.text.length - a.text.length);
    for (const form of forms) if (!this.labels.has(form.text)) this.labels.set(form.text, form.label);
    this.pattern = this.labels.size === 0 ? null : new RegExp([MARK_SOURCE, ...[...this.labels.keys()].map(escapeRegExp)].join("|"), "g");
    this.longest = Math.max(MAX_MARK_LENGTH, ...[...this.labels.keys()].map((text) => text.length));
  }

  /** Every text this redactor replaces, longest first (the GitHub Action masks each of them too). */
  forms(): string[] {
    return [...this.labels.keys()];
  }

  redact(text: string): string {
    if (this.pattern === null) return text;
    return text.replace(this.pattern, (found) => this.labels.get(found) ?? found);
  }

  /**
   * Redacts every string (and object key) inside a JSON-shaped value; returns a copy.
   * Walked rather than redacted as JSON text, so each string is matched as it is, not as its
   * escaped JSON (the JSON-escaped forms catch a secret inside a string that holds JSON).
   */
  redactValue<T>(value: T): T {
    if (this.pattern === null) return value;
    return this.redactWalk(value) as T;
  }

  /**
   * A redactor for one text that arrives in pieces: `push` returns what can be shown now,
   * redacted — everything except a tail short enough to be the start of a secret's form
   * (a secret split across two pieces is still found) — and `end` the rest.
   */
  textStream(): RedactedTextStream {
    let pending = "";
    const hold = this.longest - 1;
    return {
      push: (piece) => {
        pending += piece;
        if (this.pattern === null) return pending.length === 0 ? "" : take();
        let cut = pending.length - hold;
        if (cut <= 0) return "";
        // A form that starts before `cut` ends inside `pending` (no form is longer than
        // `hold` + 1), so each match found there is final; one crossing `cut` moves it on.
        let out = "";
        let last = 0;
        for (const match of pending.matchAll(this.pattern)) {
          if (match.index >= cut) break;
          out += pending.slice(last, match.index) + (this.labels.get(match[0]) ?? match[0]);
          last = match.index + match[0].length;
        }
        cut = Math.max(cut, last);
        out += pending.slice(last, cut);
        pending = pending.slice(cut);
        return out;
      },
      end: () => this.redact(take()),
    };
    function take(): string {
      const text = pending;
      pending = "";
      return text;
    }
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

/** One text arriving in pieces, redacted as a whole (`SecretRedactor.textStream`). */
export interface RedactedTextStream {
  /** Adds a piece; returns the redacted text that is now settled (possibly ""). */
  push(piece: string): string;
  /** The redacted rest; the stream is empty after. */
  end(): string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
