/**
 * The forms a secret is printed in, each with the mark that replaces it (secret-redactor.ts):
 *
 * - as it is, and each line of a value of several lines (a PEM key's body printed line by line,
 *   `[redacted:NAME:line]`; its `-----BEGIN …-----` armour is not secret and stays; a line
 *   shorter than `MIN_LINE_LENGTH` would match by chance and is not used);
 * - escaped, for the value and each such line: inside a JSON string (`"` and `\` and control
 *   characters escaped, as `JSON.stringify` prints configuration; with non-ASCII as `\u00e9` or
 *   `\u00E9`, as Python's json and Java print it; with `/` as `\/`, as PHP prints it; and that
 *   JSON-escaped once more, JSON inside a JSON string) — `json`; shell-quoted (`declare -p`'s
 *   double quotes, single quotes, `printf %q`) — `shell`; XML/HTML-escaped — `xml`;
 * - for a URL holding credentials (`scheme://user:password@host`), also `user:password` and the
 *   password alone (from `MIN_URL_PASSWORD_LENGTH` characters), as they are, escaped and encoded
 *   (a Basic auth header is `user:password` in base64) — `password`;
 * - encoded, for the value: base64 and base64url, padded and not, and wrapped at 64 and 76
 *   characters a line (PEM, `base64`); hex, lower and upper case; URL-encoding (`%2F` or `%2f`,
 *   `+` or `%20` for a space).
 *
 * Inside a longer base64 text the secret's encoding depends on where its first byte falls in a
 * 3-byte group, so each of the three alignments is matched by its stable middle — the
 * characters that only the secret's own bits decide (the first one or two and the last are
 * shared with the neighbouring bytes, and stay). A middle shorter than `MIN_FRAGMENT_LENGTH`
 * would match by chance in any long base64 text and is not used. Pure.
 */

/** The shortest base64 middle matched inside longer base64 text: 48 bits of the secret. */
export const MIN_FRAGMENT_LENGTH = 8;
/** The shortest line of a multi-line secret (or of its wrapped base64) matched alone. */
export const MIN_LINE_LENGTH = 8;
/** Line widths base64 is commonly wrapped at: PEM and OpenSSL (64), GNU `base64` and MIME (76). */
const BASE64_LINE_WIDTHS = [64, 76];
/** `scheme://user:password@host`: the credentials of a URL, printed apart from it (a Basic auth header, a log). */
const URL_CREDENTIALS = /[a-z][a-z0-9+.-]*:\/\/([^/\s:@]+):([^/\s@]+)@/i;
/** The shortest password of a URL matched alone: a shorter one occurs by chance too often. */
export const MIN_URL_PASSWORD_LENGTH = 8;
/** PEM armour: `-----BEGIN RSA PRIVATE KEY-----`; the same in every key, not secret. */
const PEM_ARMOUR = /^-----(BEGIN|END) [A-Z0-9 ]+-----$/;

/** One printed form of a secret and what replaces it. */
export interface SecretForm {
  text: string;
  label: string;
}

/** Every form of `value` the redactor looks for, the value itself first; no duplicates, none empty. */
export function secretForms(name: string, value: string): SecretForm[] {
  const candidates: Array<[string, string]> = [];
  for (const [text, kind] of escapedForms(value)) candidates.push([text, kind]);
  for (const line of secretLines(value)) {
    for (const [text, kind] of escapedForms(line)) candidates.push([text, kind === "" ? "line" : kind]);
  }
  candidates.push(...encodedForms(Buffer.from(value, "utf8")));
  for (const credential of urlCredentials(value)) {
    for (const [text, kind] of escapedForms(credential)) candidates.push([text, kind === "" ? "password" : kind]);
    candidates.push(...encodedForms(Buffer.from(credential, "utf8")));
  }
  const seen = new Set<string>();
  const forms: SecretForm[] = [];
  for (const [text, kind] of candidates) {
    if (text === "" || seen.has(text)) continue;
    seen.add(text);
    forms.push({ text, label: kind === "" ? `[redacted:${name}]` : `[redacted:${name}:${kind}]` });
  }
  return forms;
}

/** The lines of a multi-line value that are matched alone: long enough, not PEM armour. */
export function secretLines(value: string): string[] {
  if (!/[\r\n]/.test(value)) return [];
  return value.split(/\r?\n|\r/).map((line) => line.trim())
    .filter((line) => line.length >= MIN_LINE_LENGTH && !PEM_ARMOUR.test(line));
}

/**
 * The credentials of a URL in `value` printed apart from it: `user:password` (what a Basic auth
 * header carries, base64-encoded) and the password alone, decoded too; each from
 * `MIN_URL_PASSWORD_LENGTH` characters.
 */
export function urlCredentials(value: string): string[] {
  const match = URL_CREDENTIALS.exec(value);
  if (!match) return [];
  const [, user, password] = match as unknown as [string, string, string];
  const decoded = safeDecode(password);
  const out = [`${user}:${password}`, `${safeDecode(user)}:${decoded}`, password, decoded];
  return [...new Set(out.filter((text) => text.length >= MIN_URL_PASSWORD_LENGTH))];
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `text` as it is (kind "") and as JSON, shell and XML print it inside their quoting. */
function escapedForms(text: string): Array<[string, string]> {
  const json = JSON.stringify(text).slice(1, -1);
  const jsonAscii = json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  const xmlBase = text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return [
    [text, ""],
    [json, "json"], [jsonAscii, "json"], [jsonAscii.replace(/\\u([0-9a-f]{4})/g, (_, hex: string) => `\\u${hex.toUpperCase()}`), "json"],
    [json.replace(/\//g, "\\/"), "json"], [JSON.stringify(json).slice(1, -1), "json"],
    [text.replace(/[\\"$`]/g, "\\$&"), "shell"], [text.replace(/'/g, "'\\''"), "shell"],
    [text.replace(/[ !"$&()*,;<>?[\\\]^`{|}']/g, "\\$&").replace(/^[~#]/, "\\$&"), "shell"],
    [xmlBase, "xml"], [xmlBase.replace(/"/g, "&quot;").replace(/'/g, "&#39;"), "xml"],
    [xmlBase.replace(/"/g, "&quot;").replace(/'/g, "&apos;"), "xml"], [xmlBase.replace(/"/g, "&#34;").replace(/'/g, "&#x27;"), "xml"],
  ];
}

/** `bytes` encoded: base64 (whole, unpadded, wrapped, and the middles of each alignment), hex, URL. */
function encodedForms(bytes: Buffer): Array<[string, string]> {
  const value = bytes.toString("utf8");
  const base64 = bytes.toString("base64");
  const base64url = bytes.toString("base64url");
  const url = encodeURIComponent(value);
  const forms: Array<[string, string]> = [
    [base64, "base64"], [base64.replace(/=+$/, ""), "base64"],
    [`${base64url}${"=".repeat((4 - (base64url.length % 4)) % 4)}`, "base64url"], [base64url, "base64url"],
    [bytes.toString("hex"), "hex"], [bytes.toString("hex").toUpperCase(), "hex"],
    [url, "url"], [url.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()), "url"], [url.replace(/%20/g, "+"), "url"],
  ];
  for (const width of BASE64_LINE_WIDTHS) {
    if (base64.length <= width) continue;
    for (let at = 0; at < base64.length; at += width) {
      const line = base64.slice(at, at + width);
      if (line.length >= MIN_LINE_LENGTH) forms.push([line, "base64"]);
    }
  }
  for (const shift of [0, 1, 2]) {
    for (const middle of base64Middles(bytes, shift)) if (middle.length >= MIN_FRAGMENT_LENGTH) forms.push([middle, "base64"]);
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
