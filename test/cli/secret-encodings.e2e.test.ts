/**
 * Redaction without the sandbox, through the built CLI: a file in the workspace holds a secret
 * of the runner's environment in each common encoding (and a short secret, and a short value
 * of an ordinary variable); the model reads it with the shell and a check prints it. The event
 * log and result.json hold none of the encoded secrets, each replaced by its labelled mark; the
 * ordinary value stays.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { cliEnv, runCli } from "../support/cli.js";
import { readJson } from "../support/run-dir.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const SECRET = "tok/3n+Sécret ?k=1&x~~~>"; // 25 bytes: padded base64 with "+", unlike its base64url
const bytes = Buffer.from(SECRET);
const url = encodeURIComponent(SECRET);
/** Each encoding as a tool might print it, with the label it must become. */
const ENCODED: Array<[string, string]> = [
  [SECRET, "[redacted:DEPLOY_TOKEN]"],
  [bytes.toString("base64"), "[redacted:DEPLOY_TOKEN:base64]"],
  [bytes.toString("base64").replace(/=+$/, ""), "[redacted:DEPLOY_TOKEN:base64]"],
  [`${bytes.toString("base64url")}==`, "[redacted:DEPLOY_TOKEN:base64url]"],
  [bytes.toString("base64url"), "[redacted:DEPLOY_TOKEN:base64url]"],
  [bytes.toString("hex"), "[redacted:DEPLOY_TOKEN:hex]"],
  [bytes.toString("hex").toUpperCase(), "[redacted:DEPLOY_TOKEN:hex]"],
  [url, "[redacted:DEPLOY_TOKEN:url]"],
  [url.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()), "[redacted:DEPLOY_TOKEN:url]"],
];
/** The secret inside longer base64 text, one and two bytes into a 3-byte group. */
const EMBEDDED = [1, 2].map((shift) => Buffer.concat([Buffer.from("xy".slice(0, shift)), bytes, Buffer.from("tail")]).toString("base64"));

test("each encoding of a secret, and a short secret-named value, are redacted in the event log and result.json", async (t) => {
  const root = await tempDir(t);
  // One file a line: the event log keeps a short preview of each tool result.
  const lines = [...ENCODED.map(([text], i) => `form${i}=${text}`), ...EMBEDDED.map((b, i) => `blob${i}=${b}`), "short=hu7", "plain=zq4"];
  const files = Object.fromEntries(lines.map((line, i) => [`fixture/leak${String(i).padStart(2, "0")}.txt`, `${line}\n`]));
  const calls = lines.map((_, i) => `    - call: shell\n      input: { command: "cat leak${String(i).padStart(2, "0")}.txt" }\n`).join("");
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    ...files,
    "suite/leak.yaml": `prompt: Show me the files.
workspace: { from: ../fixture }
policy: ../policy.yaml
limits: { maxSteps: 50 }
model:
  provider: scripted
  script:
${calls}    - say: done
checks:
  - { name: print, run: "cat leak*.txt" }
`,
  });
  const out = join(root, "run");
  const result = await runCli(["run", "suite", "--out", out], {
    cwd: root, env: cliEnv({ DEPLOY_TOKEN: SECRET, DB_PASS: "hu7", BUILD_ID: "zq4" }),
  });
  assert.equal(result.code, 0, result.stderr);
  const events = await readFile(join(out, "tasks/suite/leak/default/1/events.jsonl"), "utf8");
  const check = (await readJson<{ checks: Array<{ outputTail: string }> }>(join(out, "tasks/suite/leak/default/1/result.json"))).checks[0]!.outputTail;
  const toolOutput = events.split("\n").filter((line) => line.includes('"type":"tool_result"')).join("\n");
  for (const [name, text] of [["events.jsonl", toolOutput], ["result.json", check]] as const) {
    assert.ok(text.length > 0, `${name} holds the printed file`);
    for (const [i, [encoded, label]] of ENCODED.entries()) {
      assert.ok(!text.includes(JSON.stringify(encoded).slice(1, -1)) && !text.includes(encoded), `${name}: form ${i} (${encoded}) is still there`);
      assert.ok(text.includes(`form${i}=${label}`), `${name}: form ${i} became ${label}`);
    }
    for (const [i] of EMBEDDED.entries()) assert.match(text, new RegExp(`blob${i}=[A-Za-z0-9+/]{0,3}\\[redacted:DEPLOY_TOKEN:base64\\][A-Za-z0-9+/=]{0,8}(\\\\n|\\n|$)`), `${name}: blob ${i}`);
    assert.ok(text.includes("short=[redacted:DB_PASS]"), `${name}: the short secret`);
    assert.ok(text.includes("plain=zq4"), `${name}: an ordinary variable's short value stays`);
  }
});
