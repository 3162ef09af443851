/**
 * What a run says while it works, through the built CLI: a provider's retries leave a trace (a
 * `retry` event in events.jsonl and the `--json` lines, a "retrying after 503 (attempt 2/4, 0.5 s)"
 * line), with the scripted provider's `fail: {retryable: true}` retried like a real provider's
 * failure and a real provider's (the Anthropic one, against a fake server) the same way; a Ctrl-C
 * is said once ("interrupted"); a task kept from an earlier run gets no `started` line; counts
 * read "1 task", "1 step", never "task(s)".
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { CLI, cliEnv, runCli, startCli } from "../support/cli.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";

const POLICY = "version: 1\ndefault: deny\nrules:\n  - allow: { tools: [read_file, list_dir] }\n";

/** A scripted task whose one step fails as `fail` says before it says done. */
function failingTask(fail: string): string {
  return `prompt: Say done.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - fail: ${fail}
      say: done
checks:
  - { name: ok, run: "true" }
`;
}

interface RetryEvent { type: "retry"; who: string; attempt: number; of: number; delayMs: number; reason: string; status: number | null; message: string }

async function retryEvents(out: string, key: string): Promise<RetryEvent[]> {
  const text = await readFile(join(out, "tasks", key, "default", "1", "events.jsonl"), "utf8");
  return text.trim().split("\n").map((l) => JSON.parse(l) as { type: string }).filter((e): e is RetryEvent => e.type === "retry");
}

test("a scripted retryable failure is retried like a provider's: retry events in events.jsonl, a progress line each, and the task passes", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": POLICY,
    "s/flaky.yaml": failingTask("{ status: 503, retryable: true, times: 2 }"),
    "s/down.yaml": failingTask("{ status: 529, retryable: true, message: overloaded }"),
    "s/fatal.yaml": failingTask("{ status: 400, message: bad request }"),
  });
  const out = join(root, "run");
  const run = await runCli(["run", "s", "--out", out, "--concurrency", "3"], { cwd: root });
  assert.equal(run.code, 1, run.stderr);

  const flaky = await retryEvents(out, "s/flaky");
  assert.deepEqual(flaky.map((e) => [e.who, e.attempt, e.of, e.reason, e.status]), [["task", 2, 4, "503", 503], ["task", 3, 4, "503", 503]]);
  assert.ok(flaky.every((e) => e.delayMs > 0 && e.delayMs <= 8000 && /scripted failure at step 1/.test(e.message)), JSON.stringify(flaky));
  assert.match(run.stderr, /\[s\/flaky\] retrying after 503 \(attempt 2\/4, \d+\.\d s\)\n/);
  assert.match(run.stderr, /\[s\/flaky\] retrying after 503 \(attempt 3\/4, \d+\.\d s\)\n/);
  assert.match(run.stderr, /\[s\/flaky\] passed in [\d.]+s, 1 step,/);

  // Retried up to the policy's bound, then the failure is the task's.
  const down = await retryEvents(out, "s/down");
  assert.deepEqual(down.map((e) => [e.attempt, e.reason]), [[2, "529"], [3, "529"], [4, "529"]]);
  assert.match(run.stderr, /\[s\/down\] errored \(provider\)/);
  // Not retryable: tried once, no retry said.
  assert.deepEqual(await retryEvents(out, "s/fatal"), []);
  assert.doesNotMatch(run.stderr, /\[s\/fatal\] retrying/);

  const results = JSON.parse(await readFile(join(out, "tasks/s/flaky/default/1/result.json"), "utf8")) as { status: string };
  assert.equal(results.status, "passed");
});

test("--json carries each retry as a task_event line", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": POLICY, "s/flaky.yaml": failingTask("{ status: 503, retryable: true, times: 1 }") });
  const run = await runCli(["run", "s", "--out", join(root, "run"), "--json"], { cwd: root });
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; task?: string; event?: RetryEvent });
  const retries = lines.filter((l) => l.type === "task_event" && l.event?.type === "retry");
  assert.equal(retries.length, 1, run.stdout);
  assert.equal(retries[0]!.task, "s/flaky");
  assert.deepEqual({ ...retries[0]!.event, delayMs: 0 }, { type: "retry", who: "task", attempt: 2, of: 4, delayMs: 0, reason: "503", status: 503, message: "scripted failure at step 1" });
});

test("a real provider's retries (Anthropic: an idle stream, a 503, then the answer) are said the same way", async (t) => {
  const root = await tempDir(t);
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  server.reply(
    { kind: "stream", blocks: [{ type: "text", text: "never finished" }], hangAfterFrames: 1 },
    { kind: "http_error", status: 503, type: "overloaded_error", message: "try later", headers: { "retry-after-ms": "300" } },
    { kind: "stream", blocks: [{ type: "text", text: "done" }] },
  );
  await writeFiles(root, {
    "policy.yaml": POLICY,
    "s/real.yaml": "prompt: Say done.\npolicy: ../policy.yaml\nmodel: { provider: anthropic, name: claude-sonnet-4-5 }\n",
  });
  const out = join(root, "run");
  const run = await runCli(["run", "s", "--out", out, "--stream-idle", "500ms"], {
    cwd: root, env: cliEnv({ ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: server.baseUrl }),
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /\[s\/real\] retrying after stream idle \(attempt 2\/4, \d\.\d s\)\n/);
  assert.match(run.stderr, /\[s\/real\] retrying after 503 \(attempt 3\/4, 0\.3 s\)\n/);
  const [idle, busy] = await retryEvents(out, "s/real");
  assert.deepEqual([idle?.reason, idle?.status], ["stream idle", null]);
  assert.match(idle!.message, /the stream sent no content for 500ms/);
  assert.deepEqual([busy?.reason, busy?.status, busy?.delayMs], ["503", 503, 300]);
  assert.match(busy!.message, /anthropic: 503 overloaded_error: try later/);
});

test("dropped connections are said by what happened: reset, then closed", async (t) => {
  const root = await tempDir(t);
  // A server that resets the first connection (RST), closes the second (FIN), and answers the third with a 400.
  let connections = 0;
  const server = createServer((socket: Socket) => {
    const n = ++connections;
    socket.once("data", () => {
      if (n === 1) return void socket.resetAndDestroy();
      if (n === 2) return void socket.destroy();
      const body = JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "enough" } });
      socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await writeFiles(root, {
    "policy.yaml": POLICY,
    "s/net.yaml": "prompt: Say done.\npolicy: ../policy.yaml\nmodel: { provider: anthropic, name: claude-sonnet-4-5 }\n",
  });
  const out = join(root, "run");
  const run = await runCli(["run", "s", "--out", out], { cwd: root, env: cliEnv({ ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: url }) });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /\[s\/net\] retrying after connection reset \(attempt 2\/4, \d\.\d s\)\n/);
  assert.match(run.stderr, /\[s\/net\] retrying after connection closed \(attempt 3\/4, \d\.\d s\)\n/);
  assert.match(run.stderr, /\[s\/net\] errored \(provider\)/);
  const retries = await retryEvents(out, "s/net");
  assert.deepEqual(retries.map((e) => [e.attempt, e.reason, e.status]), [[2, "connection reset", null], [3, "connection closed", null]]);
  assert.match(retries[0]!.message, /ECONNRESET/);
});

const SLOW = `prompt: Say done slowly.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - say: "a long answer that comes in four slow pieces, one by one"
      chunkDelayMs: 400
`;

test("Ctrl-C is said once (interrupted); the resumed run has no started line for the task kept from the first", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": POLICY, "s/a-quick.yaml": failingTask("{ status: 503, retryable: true, times: 1 }"), "s/b-slow.yaml": SLOW });
  const out = join(root, "run");
  const first = startCli(["run", "s", "--out", out, "--concurrency", "1"], { cwd: root });
  let stderr = "";
  first.child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  await waitFor(async () => /\[s\/b-slow\] started/.test(stderr));
  first.child.kill("SIGINT");
  const stopped = await first.done;
  assert.equal(stopped.code, 130, stopped.stderr);
  assert.match(stopped.stderr, /\[s\/b-slow\] interrupted/);
  assert.doesNotMatch(stopped.stderr, /cancel/i, "the cancel is said once, as interrupted");
  assert.match(stopped.stderr, /starting run \w+: 2 tasks in /);

  const second = await runCli(["run", "s", "--out", out, "--concurrency", "1"], { cwd: root });
  assert.equal(second.code, 0, second.stderr);
  assert.doesNotMatch(second.stderr, /\[s\/a-quick\] started/, "a kept task does not start");
  assert.match(second.stderr, /\[s\/a-quick\] passed \(kept from an earlier run\)/);
  assert.match(second.stderr, /\[s\/b-slow\] started/);
  assert.match(second.stderr, /\[s\/b-slow\] passed in [\d.]+s, 1 step,/);
});

test("one of everything reads singular: 1 task, 1 step, 1 tool call denied, 1 policy denial", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": POLICY,
    "s/one.yaml": `prompt: Write a file.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - call: write_file
      input: { path: x.txt, content: x }
    - say: done
limits: { maxSteps: 1 }
`,
  });
  const out = join(root, "run");
  const run = await runCli(["run", "s", "--out", out], { cwd: root });
  assert.equal(run.code, 1, run.stderr);
  const said = run.stderr + run.stdout + (await readFile(join(out, "summary.md"), "utf8"));
  assert.doesNotMatch(said, /\(s\)|\b1 (tasks|steps|checks|requests|tool calls|policy denials)\b/, said);
  assert.match(run.stderr, /starting run \w+: 1 task in /);
  assert.match(run.stdout, /1 tool call denied by policy/);
  assert.match(said, /0 of 1 task passed/);
  assert.match(said, /1 step · /);
  assert.match(said, /1 policy denial\b/);
  assert.match(said, /cap of 1 step without finishing|used its 1 step/);
});

/** The CLI on a pseudo-terminal (util-linux `script`), outside CI: the live view. */
function runOnTerminal(args: string[], cwd: string): Promise<string> {
  const env = cliEnv();
  delete env.CI;
  delete env.GITHUB_ACTIONS;
  const command = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  child.stdout.on("data", (c: Buffer) => (text += c.toString()));
  child.stderr.on("data", (c: Buffer) => (text += c.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", () => resolve(text));
  });
}

test("the live view marks a scripted task's dollars as simulated", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": POLICY,
    "s/priced.yaml": `prompt: List, then say done slowly.
policy: ../policy.yaml
model:
  provider: scripted
  priceAs: claude-sonnet-4-5
  script:
    - call: list_dir
    - say: "a long answer that comes in four slow pieces, one by one"
      chunkDelayMs: 300
`,
  });
  const text = await runOnTerminal(["run", "s", "--out", join(root, "run")], root).catch((err: Error) => {
    t.skip(`no pseudo-terminal (util-linux script): ${err.message}`);
    return null;
  });
  if (text === null) return;
  // The live lines once a request was priced (before that a line has no dollars at all).
  const live = text.split(/\r?\n/).filter((l) => /s\/priced\s+step \d/.test(l) && l.includes("$"));
  assert.ok(live.length > 0, text);
  assert.ok(live.every((l) => /\$\d+\.\d+ \(simulated\)$/.test(l.trimEnd())), live.join("\n"));
  assert.match(text, /Running 1 task in /);
});
