/**
 * Which environment variables a shell command must not see: names that look like secrets
 * (API keys, tokens, passwords, private keys, credentials) and values that carry a password in
 * a URL. A name the configuration allows (`ToolContext.allowEnv`) passes through. Also which
 * values are secrets to redact from what the runner writes (`isSecretValue`). Pure.
 */

/** Anywhere in the upper-cased name. */
const SECRET_SUBSTRINGS = [
  "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "APIKEY", "API_KEY", "PRIVATE_KEY",
  "ACCESS_KEY", "AUTHTOKEN", "AUTH_TOKEN",
];
/** A whole `_`-separated part of the upper-cased name. */
const SECRET_PARTS = new Set(["TOKEN", "TOKENS", "PAT", "AUTH", "PASS", "COOKIE"]);
/** The last part of the name (`SSH_KEY`, `SIGNING_KEYS`). */
const SECRET_LAST_PARTS = new Set(["KEY", "KEYS"]);
/** `scheme://user:password@host` */
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i;

/**
 * A value this long is redacted whenever its variable looks secret (by name, or by a password
 * in its URL); a shorter one occurs by chance too often, unless the name itself says secret.
 */
const MIN_SECRET_LENGTH = 8;
/**
 * The floor for a secret-named variable's value (`DB_PASS=hu7`): shorter values (`1`, `ab`)
 * would replace text everywhere while hiding next to nothing.
 */
const MIN_NAMED_SECRET_LENGTH = 3;
/** Values a secret-named variable holds as a switch, not a secret (`HAS_TOKEN=true`). */
const SWITCH_VALUES = new Set(["true", "false", "yes", "no", "on", "off", "null", "none", "nil", "unset", "enabled", "disabled"]);

/** True when a variable named `name` with this value should be kept from commands. */
export function looksSecret(name: string, value = ""): boolean {
  return namesSecret(name) || URL_WITH_PASSWORD.test(value);
}

/** True when the name itself says secret: `*SECRET*`, `*PASSWORD*`, a `TOKEN`/`PASS`/`AUTH` part, a last `KEY` part, … */
function namesSecret(name: string): boolean {
  const upper = name.toUpperCase();
  if (SECRET_SUBSTRINGS.some((s) => upper.includes(s))) return true;
  const parts = upper.split(/[^A-Z0-9]+/).filter((p) => p !== "");
  if (parts.some((p) => SECRET_PARTS.has(p))) return true;
  const last = parts.at(-1);
  return last !== undefined && parts.length > 1 && SECRET_LAST_PARTS.has(last);
}

/**
 * True when the value of `name` is a secret to keep out of logs and reports: at least
 * `MIN_SECRET_LENGTH` characters from a variable that looks secret, or at least
 * `MIN_NAMED_SECRET_LENGTH` from one whose name says secret; never a switch word.
 */
export function isSecretValue(name: string, value: string | undefined): value is string {
  if (value === undefined || SWITCH_VALUES.has(value.trim().toLowerCase())) return false;
  if (value.length >= MIN_SECRET_LENGTH) return looksSecret(name, value);
  return value.length >= MIN_NAMED_SECRET_LENGTH && namesSecret(name);
}

/** `env` without the secret-looking variables (except the allowed names), and what was removed. */
export function scrubEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  allow: readonly string[] = [],
): { env: Record<string, string>; removed: string[] } {
  const kept: Record<string, string> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (!allow.includes(name) && looksSecret(name, value)) removed.push(name);
    else kept[name] = value;
  }
  return { env: kept, removed: removed.sort() };
}
