import assert from "node:assert/strict";
import { test } from "node:test";
import { isSecretValue, looksSecret, scrubEnvironment } from "../../src/process/secret-env.js";

test("names that look like secrets are recognised", () => {
  for (const name of [
    "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "openai_apikey", "GITHUB_TOKEN", "NPM_TOKEN", "ACTIONS_RUNTIME_TOKEN",
    "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "CLIENT_SECRET", "DB_PASSWORD", "PGPASSWORD",
    "MYSQL_PWD_PASSWD", "GPG_PASSPHRASE", "GOOGLE_APPLICATION_CREDENTIALS", "SSH_PRIVATE_KEY", "STRIPE_KEY",
    "SIGNING_KEYS", "NPM_CONFIG__AUTH", "GH_PAT", "HF_TOKEN", "SESSION_COOKIE", "DB_PASS", "SSH_AUTH_SOCK",
  ]) {
    assert.equal(looksSecret(name), true, name);
  }
});

test("ordinary names pass", () => {
  for (const name of ["PATH", "HOME", "PWD", "OLDPWD", "LANG", "TERM", "CI", "GITHUB_SHA", "NODE_OPTIONS", "KEYBOARD", "TOKENIZERS_PARALLELISM", "BYPASS_CACHE", "KEY"]) {
    assert.equal(looksSecret(name), false, name);
  }
});

test("a URL carrying a password is a secret whatever its name", () => {
  assert.equal(looksSecret("DATABASE_URL", "postgres://app:hunter2@db:5432/app"), true);
  assert.equal(looksSecret("DATABASE_URL", "postgres://db:5432/app"), false);
});

test("scrubEnvironment removes secrets except the allowed names", () => {
  const env = { PATH: "/bin", GITHUB_TOKEN: "t", OPENAI_API_KEY: "k", HOME: "/h", GONE: undefined };
  assert.deepEqual(scrubEnvironment(env), { env: { PATH: "/bin", HOME: "/h" }, removed: ["GITHUB_TOKEN", "OPENAI_API_KEY"] });
  assert.deepEqual(scrubEnvironment(env, ["GITHUB_TOKEN"]), { env: { PATH: "/bin", GITHUB_TOKEN: "t", HOME: "/h" }, removed: ["OPENAI_API_KEY"] });
});

test("a secret value: 8 characters from a secret-looking variable, 3 when the name says secret, never a switch word", () => {
  const judged = (name: string, value: string | undefined) => isSecretValue(name, value);
  assert.deepEqual(
    [judged("DB_PASS", "hu7"), judged("DB_PASS", "hu"), judged("GH_TOKEN", "true"), judged("API_KEY", "Off"), judged("BUILD_ID", "zq4"),
      judged("DATABASE_URL", "pg://u:pw@db"), judged("HOME", "/home/someone"), judged("UNSET_TOKEN", undefined)],
    [true, false, false, false, false, true, false, false],
  );
});
