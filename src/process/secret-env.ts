/**
 * Which environment variables a shell command must not see: names that look like secrets
 * (API keys, tokens, passwords, private keys, credentials) and values that carry a password in
 * a URL. A name the configuration allows (`ToolContext.allowEnv`) passes through. Pure.
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

/** True when a variable named `name` with this value should be kept from commands. */
export function looksSecret(name: string, value = ""): boolean {
  const upper = name.toUpperCase();
  if (SECRET_SUBSTRINGS.some((s) => upper.includes(s))) return true;
  const parts = upper.split(/[^A-Z0-9]+/).filter((p) => p !== "");
  if (parts.some((p) => SECRET_PARTS.has(p))) return true;
  const last = parts.at(-1);
  if (last !== undefined && parts.length > 1 && SECRET_LAST_PARTS.has(last)) return true;
  return URL_WITH_PASSWORD.test(value);
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
