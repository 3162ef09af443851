/** Secret redaction: values of secret-looking variables never reach what the runner writes. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { MIN_FRAGMENT_LENGTH, MIN_LINE_LENGTH, SecretRedactor, base64Middles, secretForms } from "../../../src/runner/run-dir/secret-redactor.js";
import { secretLines } from "../../../src/runner/run-dir/secret-forms.js";
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

/** A private key as a variable holds it: armour, 64-character base64 lines, a short last line. */
const PEM = [
  "-----BEGIN OPENSSH PRIVATE KEY-----",
  "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
  "QyNTUxOQAAACDx3fK7Gq1vYb2m4TnXo9sR0kPqJd8WcLhE5uZy6aVtNgAAAJgk1c2pJNXN",
  "qQAAAAtzc2gtZWQyNTUxOQAAACDx3fK7Gq1vYb2m4TnXo9sR0kPqJd8WcLhE5uZy6aVtNg",
  "AAAEDr2w==",
  "-----END OPENSSH PRIVATE KEY-----",
  "",
].join("\n");

test("each line of a multi-line secret (a PEM key) is redacted where it appears alone; its armour stays", () => {
  const redactor = new SecretRedactor({ SSH_PRIVATE_KEY: PEM });
  const body = PEM.split("\n").slice(1, 5);
  // Printed line by line (a shell loop, `head -2`, a log prefixing each line), with CRLF too.
  const printed = body.map((line, i) => `${i}: ${line}\r`).join("\n");
  assert.equal(redactor.redact(printed), body.map((_, i) => `${i}: [redacted:SSH_PRIVATE_KEY:line]\r`).join("\n"));
  assert.equal(redactor.redact(PEM), "[redacted:SSH_PRIVATE_KEY]", "the whole key, as it is");
  assert.equal(redactor.redact(PEM.trimEnd()), `${PEM.split("\n")[0]}\n${body.map(() => "[redacted:SSH_PRIVATE_KEY:line]").join("\n")}\n${PEM.split("\n")[5]}`);
  assert.equal(redactor.redact(JSON.stringify({ key: PEM })), '{"key":"[redacted:SSH_PRIVATE_KEY:json]"}', "the whole key inside JSON");
  assert.equal(redactor.redact("-----BEGIN OPENSSH PRIVATE KEY-----"), "-----BEGIN OPENSSH PRIVATE KEY-----");
  assert.deepEqual(secretLines("one line only"), [], "a value of one line has no lines of its own");
  assert.deepEqual(secretLines("short\nab\n  a-longer-line \n"), ["a-longer-line"]);
});

test("a secret escaped as JSON, shell and XML print it is redacted, named by the escaping", () => {
  const secret = `p"a\\ss é$x'y<z>&/w`;
  const redactor = new SecretRedactor({ APP_PASSWORD: secret });
  const json = JSON.stringify(secret).slice(1, -1);
  const escaped: Array<[string, string]> = [
    [json, "json"], // JSON.stringify of a config
    [json.replace("é", "\\u00e9"), "json"], // Python's json.dumps (ensure_ascii)
    [json.replace("é", "\\u00E9"), "json"], // Java, upper-case hex
    [json.replace(/\//g, "\\/"), "json"], // PHP's json_encode
    [JSON.stringify(json).slice(1, -1), "json"], // JSON inside a JSON string
    [secret.replace(/[\\"$`]/g, "\\$&"), "shell"], // declare -p, "…"
    [secret.replace(/'/g, "'\\''"), "shell"], // '…'
    ["p\\\"a\\\\ss\\ é\\$x\\'y\\<z\\>\\&/w", "shell"], // printf %q
    ["p&quot;a\\ss é$x&#39;y&lt;z&gt;&amp;/w", "xml"], // an HTML page, a JUnit report
    ["p\"a\\ss é$x'y&lt;z&gt;&amp;/w", "xml"],
  ];
  assert.equal(new Set(escaped.map(([text]) => text)).size, escaped.length, "every form is a different text");
  for (const [text, kind] of escaped) assert.equal(redactor.redact(`<<${text}>>`), `<<[redacted:APP_PASSWORD:${kind}]>>`, `${kind}: ${text}`);
  // As a program prints its configuration: the JSON of an object holding the secret.
  const config = JSON.stringify({ db: { password: secret, host: "db" } }, null, 2);
  assert.equal(redactor.redact(config), JSON.stringify({ db: { password: "[redacted:APP_PASSWORD:json]", host: "db" } }, null, 2));
});

test("a long secret's base64, wrapped at 64 or 76 characters a line, is redacted line by line", () => {
  const secret = "ghp_" + "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".repeat(2);
  const redactor = new SecretRedactor({ GH_TOKEN: secret });
  const base64 = Buffer.from(secret).toString("base64");
  for (const width of [64, 76]) {
    const wrapped = base64.match(new RegExp(`.{1,${width}}`, "g"))!.join("\n");
    const redacted = redactor.redact(wrapped);
    for (const line of redacted.split("\n")) assert.ok(line === "[redacted:GH_TOKEN:base64]" || line.length < MIN_LINE_LENGTH, `width ${width}: ${line}`);
  }
});

test("redacting is idempotent: a mark already in the text stays as it is, even when a secret is a word of it", () => {
  const redactor = new SecretRedactor({ ODD_TOKEN: "redacted", OTHER_TOKEN: "tok-0123456789" });
  const once = redactor.redact("redacted tok-0123456789");
  assert.equal(once, "[redacted:ODD_TOKEN] [redacted:OTHER_TOKEN]");
  assert.equal(redactor.redact(once), once);
  assert.equal(redactor.redact("[redacted:SOMEONE_ELSE] redacted"), "[redacted:SOMEONE_ELSE] [redacted:ODD_TOKEN]");
});

test("textStream: text pushed in pieces comes out as the whole text redacted, whatever the cuts", (t) => {
  const seed = seedFrom(process.env.RHEMA_TEST_SEED, "RHEMA_TEST_SEED");
  const random = seededRandom(seed);
  t.diagnostic(`seed ${seed} (set RHEMA_TEST_SEED to replay)`);
  const redactor = new SecretRedactor({ DEPLOY_TOKEN: "tok/3n+Sécret", SSH_PRIVATE_KEY: PEM });
  const text = `a tok/3n+Sécret b ${JSON.stringify({ k: "tok/3n+Sécret" })} ${PEM} [redacted:X] tok/3n+Sé end`.repeat(5);
  for (let round = 0; round < 50; round += 1) {
    const stream = redactor.textStream();
    let out = "";
    for (let at = 0; at < text.length;) {
      const size = random.int(1, 12);
      out += stream.push(text.slice(at, at + size));
      at += size;
    }
    out += stream.end();
    assert.equal(out, redactor.redact(text), `round ${round} (seed ${seed})`);
  }
  const empty = new SecretRedactor({}).textStream();
  assert.equal(empty.push("as it comes"), "as it comes", "with no secrets nothing is held back");
});

test("forms() lists every text the redactor replaces, longest first", () => {
  const forms = new SecretRedactor({ DB_PASS: "hu7", HOME: "/root" }).forms();
  assert.deepEqual(forms, ["687537", "aHU3", "hu7"]);
});

test("a URL's credentials are redacted apart from it too: the password alone, and user:password in a Basic auth header", () => {
  const redactor = new SecretRedactor({ DATABASE_URL: "postgres://deploy:s3cr%40tPassw0rd@db.internal:5432/app", SHORT_URL: "pg://u:p@h" });
  assert.equal(redactor.redact("password s3cr@tPassw0rd rejected"), "password [redacted:DATABASE_URL:password] rejected");
  assert.equal(redactor.redact("pw=s3cr%40tPassw0rd"), "pw=[redacted:DATABASE_URL:password]");
  const basic = Buffer.from("deploy:s3cr@tPassw0rd").toString("base64");
  assert.equal(redactor.redact(`Authorization: Basic ${basic}`), "Authorization: Basic [redacted:DATABASE_URL:base64]");
  assert.equal(redactor.redact("postgres://deploy:s3cr%40tPassw0rd@db.internal:5432/app"), "[redacted:DATABASE_URL]");
  assert.equal(redactor.redact(`p and u:p stay, and ${Buffer.from("u:p").toString("base64")}`), `p and u:p stay, and ${Buffer.from("u:p").toString("base64")}`, "short credentials are matched only inside their URL");
});
