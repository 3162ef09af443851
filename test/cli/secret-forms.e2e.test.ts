/**
 * Secrets in the forms programs print them, through the built CLI: the model writes a secret
 * (as it is and JSON-escaped), a provider's error echoes it, shell commands print a PEM key line
 * by line, a configuration as JSON (JSON.stringify, Python's ensure_ascii, JSON inside JSON),
 * `declare -p`, and a file named with a secret lands in a workspace fingerprint. Every file rhema
 * writes under the run directory (the task's workspace is the task's own files, not rhema's) and
 * everything it prints — plain lines on stderr, `--json` lines on stdout — hold none of the
 * forms, each replaced by its labelled mark; the same message reads the same in every stream and
 * file (one redactor). A run killed while it waits for the model and resumed sends the request
 * the uninterrupted run sent, byte for byte — with the model's secret already redacted in it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { cliEnv, runCli, startCli } from "../support/cli.js";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { readJson } from "../support/run-dir.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";

const SECRET = 'dq"tok\\en/Sé+cret~42';
const FILE_SECRET = "ftok-9f8e7d6c5b4a";
const PEM_BODY = [
  "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
  "QyNTUxOQAAACDx3fK7Gq1vYb2m4TnXo9sR0kPqJd8WcLhE5uZy6aVtNgAAAJgk1c2pJNXN",
  "qQAAAAtzc2gtZWQyNTUxOQAAACDx3fK7Gq1vYb2m4TnXo9sR0kPqJd8WcLhE5uZy6aVtNg",
  "AAAEDr2w==",
];
const PEM = ["-----BEGIN OPENSSH PRIVATE KEY-----", ...PEM_BODY, "-----END OPENSSH PRIVATE KEY-----", ""].join("\n");
const json = (text: string) => JSON.stringify(text).slice(1, -1);

/** Every form of the secrets that must be printed and stored nowhere. */
const FORMS: Array<[string, string]> = [
  ["the secret", SECRET],
  ["JSON-escaped", json(SECRET)],
  ["JSON-escaped twice", json(json(SECRET))],
  ["JSON with \\u escapes", json(SECRET).replace("é", "\\u00e9")],
  ["declare -p", SECRET.replace(/[\\"$`]/g, "\\$&")],
  ["base64", Buffer.from(SECRET).toString("base64")],
  ["the PEM key JSON-escaped", json(PEM.trimEnd())],
  ...PEM_BODY.map((line, i): [string, string] => [`PEM line ${i + 1}`, line]),
  ["the file-name secret", FILE_SECRET],
];

const ENV = { DEPLOY_TOKEN: SECRET, SSH_PRIVATE_KEY: PEM, FILE_TOKEN: FILE_SECRET };
const ALLOW = ["--allow-env", "DEPLOY_TOKEN", "--allow-env", "SSH_PRIVATE_KEY", "--allow-env", "FILE_TOKEN", "--sandbox", "off"];
const POLICY = "version: 1\ndefault: allow\nrules: []\n";

const COMMANDS = [
  "ls",
  'printf \'%s\\n\' "$SSH_PRIVATE_KEY" | while read -r line; do echo "key: $line"; done',
  "node -e 'console.log(JSON.stringify({ deploy: { token: process.env.DEPLOY_TOKEN, key: process.env.SSH_PRIVATE_KEY } }, null, 2))'",
  "node -e 'console.log(JSON.stringify(JSON.stringify({ token: process.env.DEPLOY_TOKEN })))'",
  "node -e 'console.log(JSON.stringify({ t: process.env.DEPLOY_TOKEN }).replace(/[\\u0080-\\uffff]/g, (c) => \"\\\\u\" + c.charCodeAt(0).toString(16).padStart(4, \"0\")))'",
  "declare -p DEPLOY_TOKEN",
  'printf %s "$DEPLOY_TOKEN" | base64',
];

/** A task file as JSON (which YAML reads): no quoting to get wrong. */
function taskFile(task: object): string {
  return JSON.stringify({ policy: "../policy.yaml", limits: { maxSteps: 20 }, ...task }, null, 2) + "\n";
}

async function suite(root: string): Promise<void> {
  await writeFiles(root, {
    "policy.yaml": POLICY,
    // A fixture file named with a secret: the task's workspace holds it; every fingerprint names it redacted.
    [`fixture/named-${FILE_SECRET}.txt`]: "a file named with a secret\n",
    "suite/leaky.yaml": taskFile({
      prompt: "Show me the deployment configuration.",
      workspace: { from: "../fixture" },
      model: {
        provider: "scripted",
        script: [
          { say: `The token is ${SECRET}; as JSON: ${JSON.stringify({ token: SECRET })}. Let me look.`, call: "shell", input: { command: COMMANDS[0] } },
          ...COMMANDS.slice(1).map((command) => ({ call: "shell", input: { command } })),
          { say: `Done: the key ends ${PEM_BODY[3]} and the token is ${SECRET}.` },
        ],
      },
      checks: [{ name: "config", run: "node -e 'console.log(JSON.stringify({ token: process.env.DEPLOY_TOKEN }))'" }],
    }),
    "suite/echo.yaml": taskFile({
      prompt: "Say hello.",
      model: { provider: "scripted", script: [{ fail: { status: 401, message: `401 invalid key ${SECRET}: ${JSON.stringify({ error: { message: `bad key ${SECRET}` } })}` } }] },
    }),
  });
}

/** Every file under `dir` but the tasks' workspaces and their snapshots, as [relative path, text]. */
async function filesUnder(dir: string): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    const rel = path.slice(dir.length + 1);
    // The workspace and its snapshot (changes.git's index, the shared objects, the fixture's index) are the task's own files; changes.patch is rhema's and is checked.
    if (!entry.isFile() || rel.split("/").some((part) => ["workspace", "changes.git", "changes-objects", "changes-indexes"].includes(part))) continue;
    out.push([rel, await readFile(path, "utf8")]);
  }
  return out;
}

function assertNoForms(where: string, text: string): void {
  for (const [name, form] of FORMS) assert.ok(!text.includes(form), `${where} holds ${name}: …${text.slice(Math.max(0, text.indexOf(form) - 80), text.indexOf(form) + form.length + 20)}…`);
}

test("no form of a secret is printed or stored: model text, a provider's error, PEM lines, JSON-escaped config, file names", async (t) => {
  const root = await tempDir(t);
  await suite(root);
  const plain = await runCli(["run", "suite", "--out", "plain", ...ALLOW], { cwd: root, env: cliEnv(ENV) });
  const jsonRun = await runCli(["run", "suite", "--out", "json", "--json", ...ALLOW], { cwd: root, env: cliEnv(ENV) });
  for (const [name, run] of [["plain", plain], ["json", jsonRun]] as const) {
    assert.equal(run.code, 1, `${name}: the echo task errored\n${run.stderr}`);
    const results = await Promise.all(["leaky", "echo"].map((id) => readJson<{ status: string; error?: { message: string } }>(join(root, name, "tasks/suite", id, "default/1/result.json"))));
    assert.deepEqual(results.map((r) => r.status), ["passed", "errored"], `${name}: ${run.stderr}`);
    assertNoForms(`${name}: stdout`, run.stdout);
    assertNoForms(`${name}: stderr`, run.stderr);
    const files = await filesUnder(join(root, name));
    assert.ok(files.some(([rel]) => rel.endsWith("session.fingerprint.json")), "a fingerprint was written");
    for (const [rel, text] of files) assertNoForms(`${name}: ${rel}`, text);
    for (const [rel] of files) assert.ok(!rel.includes(FILE_SECRET), rel);

    // Not vacuous: each secret's form is there, as its mark.
    const task = (id: string, file: string) => files.find(([rel]) => rel === `tasks/suite/${id}/default/1/${file}`)?.[1] ?? "";
    const session = task("leaky", "session.json") + task("leaky", "session.journal.jsonl");
    assert.match(session, /The token is \[redacted:DEPLOY_TOKEN\]; as JSON: \{\\"token\\":\\"\[redacted:DEPLOY_TOKEN:json\]\\"\}/, "the model's text, redacted in the checkpoint");
    assert.match(session, /key: \[redacted:SSH_PRIVATE_KEY:line\]\\nkey: \[redacted:SSH_PRIVATE_KEY:line\]/, "each PEM line the command printed");
    assert.match(task("leaky", "session.fingerprint.json"), /named-\[redacted:FILE_TOKEN\]\.txt/);
    assert.match(task("leaky", "final-answer.txt") + task("leaky", "result.json"), /\[redacted:SSH_PRIVATE_KEY:line\]/);
    const echoed = results[1]!.error!.message;
    assert.ok(echoed.includes("401 invalid key [redacted:DEPLOY_TOKEN]") && echoed.includes("[redacted:DEPLOY_TOKEN:json]"), echoed);
    assert.ok(task("echo", "events.jsonl").includes(JSON.stringify(echoed)), "events.jsonl has the same message: one redactor");
    if (name === "json") {
      const lines = run.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { type: string; task?: string; event?: { type: string; message?: string; delta?: string } });
      const errorEvent = lines.find((l) => l.event?.type === "turn_error");
      assert.equal(errorEvent?.event?.message, echoed, "--json shows the message the files hold");
      const said = lines.filter((l) => l.task === "suite/leaky" && l.event?.type === "text").map((l) => l.event!.delta).join("");
      assert.ok(said.startsWith("The token is [redacted:DEPLOY_TOKEN]; as JSON: "), said);
    } else {
      assert.ok(run.stderr.includes("agent error provider: 401 invalid key [redacted:DEPLOY_TOKEN]"), run.stderr);
    }
  }
});

test("a run killed while it waits for the model resumes with the request the uninterrupted run sent, the model's secret redacted in both", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": POLICY,
    "suite/real.yaml": "prompt: Show the token.\npolicy: ../policy.yaml\nmodel: { provider: anthropic, name: claude-test }\n",
  });
  const env = cliEnv({ ...ENV, ANTHROPIC_API_KEY: "sk-ant-test-0123456789", ANTHROPIC_BASE_URL: server.baseUrl });
  server.reply(
    { kind: "stream", blocks: [{ type: "text", text: `The token is ${SECRET}, or ${JSON.stringify(SECRET)}.` }, { type: "tool_use", id: "toolu_1", name: "shell", input: { command: `echo "${json(SECRET)}" > /dev/null; echo ok` } }] },
    { kind: "stream", blocks: [{ type: "text", text: "never finished" }], hangAfterFrames: 1 },
  );
  const first = startCli(["run", "suite", "--out", "run", ...ALLOW], { cwd: root, env, detached: true });
  await Promise.race([waitFor(async () => server.requests.length >= 2), first.done.then((r) => assert.fail(`the run ended before its second request: ${r.stderr}`))]);
  process.kill(-first.child.pid!, "SIGKILL");
  await first.done;

  server.reply({ kind: "stream", blocks: [{ type: "text", text: `Done, ${SECRET}.` }] });
  const resumed = await runCli(["run", "suite", "--out", "run", ...ALLOW], { cwd: root, env });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual(server.violations, []);
  assert.equal(server.requests.length, 3);
  assert.deepEqual(server.bodies[2], server.bodies[1], "the resumed request is the uninterrupted one");
  const sent = JSON.stringify(server.bodies[1]);
  assert.ok(sent.includes("The token is [redacted:DEPLOY_TOKEN], or \\\"[redacted:DEPLOY_TOKEN:json]\\\"."), sent);
  assertNoForms("the request after the model wrote the secret", sent);
  assertNoForms("the resumed run's output", resumed.stdout + resumed.stderr);
  for (const [rel, text] of await filesUnder(join(root, "run"))) assertNoForms(rel, text);
});
