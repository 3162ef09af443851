/** Secret redaction: values of secret-looking variables never reach what the runner writes. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { MIN_FRAGMENT_LENGTH, SecretRedactor, base64Middles, secretForms } from "../../../src/runner/execute/secret-redactor.js";
import { looksSecret } from "../../../src/process/secret-env.js";
import { seedFrom, seededRandom } from "../../support/seeded-random.js";

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

test("a short value is redacted when its variable's name says secret, from 3 characters; switch words never", () => {
  const redactor = new SecretRedactor({
    DB_PASS: "hu7", SHORT_TOKEN: "abc1234", TWO_SECRET: "ab", HAS_TOKEN: "true", EMPTY_SECRET: "", UNSET_TOKEN: undefined,
    BUILD_ID: "zq4", DATABASE_URL: "pg://u:p@h",
  });
  assert.equal(
    redactor.redact("hu7 abc1234 ab true zq4 pg://u:p@h"),
    "[redacted:DB_PASS] [redacted:SHORT_TOKEN] ab true zq4 [redacted:DATABASE_URL]",
  );
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

test("each common encoding of a secret is redacted, named by its encoding", () => {
  const secret = "s3cr3t/Pa ss?~>!";
  const redactor = new SecretRedactor({ DEPLOY_TOKEN: secret });
  const bytes = Buffer.from(secret);
  const url = encodeURIComponent(secret);
  const encodings: Array<[string, string]> = [
    [bytes.toString("base64"), "base64"],
    [bytes.toString("base64").replace(/=+$/, ""), "base64"],
    [`${bytes.toString("base64url")}==`, "base64url"],
    [bytes.toString("base64url"), "base64url"],
    [bytes.toString("hex"), "hex"],
    [bytes.toString("hex").toUpperCase(), "hex"],
    [url, "url"],
    [url.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()), "url"],
    [url.replace(/%20/g, "+"), "url"],
  ];
  assert.ok(/[+/]/.test(bytes.toString("base64")) && bytes.toString("base64").endsWith("=="), "the secret's base64 is padded and differs from its base64url");
  assert.equal(new Set(encodings.map(([text]) => text)).size, encodings.length, "every form is a different text");
  for (const [text, encoding] of encodings) {
    assert.equal(redactor.redact(`<${text}>`), `<[redacted:DEPLOY_TOKEN:${encoding}]>`, `${encoding}: ${text}`);
  }
});

test("a secret's base64 inside longer base64 text is found at each of the three alignments", (t) => {
  const seed = seedFrom(process.env.RHEMA_TEST_SEED, "RHEMA_TEST_SEED");
  const random = seededRandom(seed);
  t.diagnostic(`seed ${seed} (set RHEMA_TEST_SEED to replay)`);
  const secret = "ghp_0123456789abcdef";
  const redactor = new SecretRedactor({ GH_TOKEN: secret });
  const randomBytes = (n: number) => Buffer.from(Array.from({ length: n }, () => random.int(0, 255)));
  for (let before = 0; before < 6; before += 1) {
    for (let after = 0; after < 4; after += 1) {
      const blob = Buffer.concat([randomBytes(before), Buffer.from(secret), randomBytes(after)]);
      for (const encoding of ["base64", "base64url"] as const) {
        const redacted = redactor.redact(blob.toString(encoding));
        assert.match(redacted, /\[redacted:GH_TOKEN:base64(url)?\]/, `${encoding}, ${before} bytes before, ${after} after (seed ${seed})`);
        const [kept, cut] = redacted.split(/\[redacted:[^\]]+\]/);
        assert.ok((kept ?? "").length <= Math.ceil((before * 8) / 6) + 1 && (cut ?? "").length <= 4 + Math.ceil((after * 8) / 6), `only the edges stay: ${redacted}`);
      }
    }
  }
});

test("the stable base64 middle of each alignment is what the bytes alone decide; short ones are not used", () => {
  const bytes = Buffer.from("abcdefgh");
  assert.deepEqual(base64Middles(bytes, 0), ["YWJjZGVmZ2", "YWJjZGVmZ2"]);
  for (const shift of [1, 2]) {
    const [middle] = base64Middles(bytes, shift);
    for (const filler of [0x00, 0xff, 0x5a]) {
      assert.ok(Buffer.concat([Buffer.alloc(shift, filler), bytes, Buffer.from([filler])]).toString("base64").includes(middle), `shift ${shift}`);
    }
  }
  const short = secretForms("DB_PASS", "hu7").map((f) => f.text);
  assert.deepEqual(short, ["hu7", "aHU3", "687537"]);
  assert.ok(secretForms("DB_PASS", "hunter22").every((f) => f.text.length >= 3));
  assert.ok(base64Middles(Buffer.from("hu7"), 1)[0].length < MIN_FRAGMENT_LENGTH);
});
