/** Secret redaction: values of secret-looking variables never reach what the runner writes. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SecretRedactor } from "../../../src/runner/execute/secret-redactor.js";
import { looksSecret } from "../../../src/process/secret-env.js";

test("replaces the values of secret-looking variables with their names", () => {
  const redactor = new SecretRedactor({
    ANTHROPIC_API_KEY: "sk-ant-0123456789",
    GITHUB_TOKEN: "ghp_abcdefghij",
    DB_PASSWORD: "hunter2hunter2",
    MY_SECRET_THING: "s3cr3t-value",
    AWS_SECRET_ACCESS_KEY: "AKIAxyzxyzxyz",
  });
  assert.equal(
    redactor.redact("key sk-ant-0123456789, token ghp_abcdefghij, pw hunter2hunter2, s3cr3t-value and AKIAxyzxyzxyz twice AKIAxyzxyzxyz"),
    "key [redacted:ANTHROPIC_API_KEY], token [redacted:GITHUB_TOKEN], pw [redacted:DB_PASSWORD], [redacted:MY_SECRET_THING] and [redacted:AWS_SECRET_ACCESS_KEY] twice [redacted:AWS_SECRET_ACCESS_KEY]",
  );
});

test("keeps the values of variables whose names do not look secret", () => {
  const redactor = new SecretRedactor({ HOME: "/home/someone", PATH: "/usr/bin:/bin", TOKENIZER_MODE: "fast-and-loose", KEYBOARD: "us-international" });
  const text = "/home/someone /usr/bin:/bin fast-and-loose us-international";
  assert.equal(redactor.redact(text), text);
  for (const name of ["HOME", "PATH", "TOKENIZER_MODE", "KEYBOARD"]) assert.equal(looksSecret(name), false, name);
  for (const name of ["API_KEY", "TOKEN", "NPM_TOKEN", "SSH_PRIVATE_KEY", "GCP_CREDENTIALS", "passwd"]) assert.equal(looksSecret(name), true, name);
});

test("ignores values shorter than 8 characters, which occur by chance", () => {
  const redactor = new SecretRedactor({ SHORT_TOKEN: "abc1234", EMPTY_SECRET: "", UNSET_TOKEN: undefined, LONG_TOKEN: "abcd1234" });
  assert.equal(redactor.redact("abc1234 and abcd1234"), "abc1234 and [redacted:LONG_TOKEN]");
});

test("replaces the longest secret first, so one that contains another is hidden whole", () => {
  const redactor = new SecretRedactor({ A_TOKEN: "prefix-12", B_TOKEN: "prefix-12-and-more" });
  assert.equal(redactor.redact("x prefix-12-and-more y prefix-12 z"), "x [redacted:B_TOKEN] y [redacted:A_TOKEN] z");
});

test("redactValue redacts every string inside a nested JSON value and leaves the input as it was", () => {
  const redactor = new SecretRedactor({ SERVICE_TOKEN: "tok-0123456789" });
  const value = {
    status: "passed",
    steps: 3,
    checks: [{ name: "echo", outputTail: "printed tok-0123456789\n", passed: true, exitCode: 0 }],
    nested: { deeper: ["tok-0123456789", null, "clean"] },
  };
  assert.deepEqual(redactor.redactValue(value), {
    status: "passed",
    steps: 3,
    checks: [{ name: "echo", outputTail: "printed [redacted:SERVICE_TOKEN]\n", passed: true, exitCode: 0 }],
    nested: { deeper: ["[redacted:SERVICE_TOKEN]", null, "clean"] },
  });
  assert.equal(value.nested.deeper[0], "tok-0123456789", "the input is not changed");
});

test("a secret with JSON-special characters is still found inside redactValue", () => {
  const redactor = new SecretRedactor({ ODD_PASSWORD: 'quote"back\\slash' });
  assert.deepEqual(redactor.redactValue({ line: 'pw=quote"back\\slash!' }), { line: "pw=[redacted:ODD_PASSWORD]!" });
});

test("with no secrets, redactValue returns the value untouched", () => {
  const value = { a: [1, "two"] };
  assert.equal(new SecretRedactor({ HOME: "/root/somewhere" }).redactValue(value), value);
});
