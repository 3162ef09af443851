/** The runner's own commands (setup, checks): real bash, exit codes, output tails, kills, a clean env. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { readFile, rm } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { OUTPUT_TAIL_BYTES, processCommandRunner, type CommandRequest } from "../../../src/runner/execute/command-runner.js";
import { tempDir } from "../../support/temp-dir.js";
import { hostDir, sandboxSkip } from "../../process/sandbox-fixture.js";

const BASE_ENV = { PATH: process.env.PATH };
const request = (cwd: string, command: string, extra: Partial<CommandRequest> = {}): CommandRequest =>
  ({ command, cwd, timeoutMs: 10_000, signal: new AbortController().signal, ...extra });

test("reports the exit code and the output of stdout and stderr, run in the folder given", async (t) => {
  const cwd = await tempDir(t);
  const run = processCommandRunner({ baseEnv: BASE_ENV });
  const outcome = await run(request(cwd, "echo out; pwd; exit 3"));
  assert.deepEqual({ ...outcome, durationMs: 0 }, { exitCode: 3, outputTail: `out\n${cwd}\n`, timedOut: false, durationMs: 0 });
  // Two pipes: their relative order is not fixed, so stderr is checked on its own.
  assert.deepEqual({ ...(await run(request(cwd, "echo err >&2; exit 1"))), durationMs: 0 }, { exitCode: 1, outputTail: "err\n", timedOut: false, durationMs: 0 });
  assert.ok(outcome.durationMs >= 0 && outcome.durationMs < 5_000);
  assert.deepEqual({ ...(await run(request(cwd, "true"))), durationMs: 0 }, { exitCode: 0, outputTail: "", timedOut: false, durationMs: 0 });
});

test("keeps only the tail of a big output, with a note of what was left out", async (t) => {
  const cwd = await tempDir(t);
  const outcome = await processCommandRunner({ baseEnv: BASE_ENV })(request(cwd, "seq 1 50000"));
  assert.equal(outcome.exitCode, 0);
  assert.ok(outcome.outputTail.endsWith("\n49999\n50000\n"));
  assert.ok(!outcome.outputTail.includes("\n1\n2\n3\n"));
  assert.match(outcome.outputTail, /bytes of output omitted; 288894 bytes in all/);
  assert.ok(outcome.outputTail.length <= OUTPUT_TAIL_BYTES + 100, `capped (${outcome.outputTail.length})`);
  const small = await processCommandRunner({ baseEnv: BASE_ENV, tailBytes: 10 })(request(cwd, "echo 0123456789abcdefghij"));
  assert.equal(small.outputTail, "\n… [11 bytes of output omitted; 21 bytes in all] …\nbcdefghij\n");
});

test("a command past its timeout is killed: no exit code, timedOut", async (t) => {
  const cwd = await tempDir(t);
  const started = Date.now();
  const outcome = await processCommandRunner({ baseEnv: BASE_ENV })(request(cwd, "echo begun; sleep 30", { timeoutMs: 200 }));
  assert.deepEqual({ ...outcome, durationMs: 0 }, { exitCode: null, outputTail: "begun\n", timedOut: true, durationMs: 0 });
  assert.ok(Date.now() - started < 5_000, "killed promptly");
});

test("the signal stops a running command: no exit code, not a timeout", async (t) => {
  const cwd = await tempDir(t);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  const started = Date.now();
  const outcome = await processCommandRunner({ baseEnv: BASE_ENV })(request(cwd, "sleep 30", { signal: controller.signal }));
  assert.deepEqual({ ...outcome, durationMs: 0 }, { exitCode: null, outputTail: "", timedOut: false, durationMs: 0 });
  assert.ok(Date.now() - started < 5_000, "stopped promptly");
});

test("secret-looking variables are kept from the command unless allowed", async (t) => {
  const cwd = await tempDir(t);
  const baseEnv = { ...BASE_ENV, DEPLOY_TOKEN: "tok-0123456789", NPM_TOKEN: "npm-0123456789", PLAIN_SETTING: "visible" };
  const command = 'echo "${DEPLOY_TOKEN:-none} ${NPM_TOKEN:-none} ${PLAIN_SETTING:-none}"';
  assert.equal((await processCommandRunner({ baseEnv })(request(cwd, command))).outputTail, "none none visible\n");
  assert.equal((await processCommandRunner({ baseEnv, allowEnv: ["NPM_TOKEN"] })(request(cwd, command))).outputTail, "none npm-0123456789 visible\n");
});

test("a sandboxed request: the workspace is writable and nothing else; setup reaches the host's network, a check does not", { skip: await sandboxSkip() }, async (t) => {
  const cwd = await hostDir(t);
  const server = createServer((socket) => socket.end("served\n"));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const run = processCommandRunner({ baseEnv: BASE_ENV });
  t.after(() => rm(`/var/tmp/rhema-cr-${process.pid}`, { force: true })); // there only if the sandbox failed
  const command = `echo made > made; touch /var/tmp/rhema-cr-${process.pid} 2>/dev/null || echo read-only; head -1 2>/dev/null </dev/tcp/127.0.0.1/${port} || echo refused`;
  const setup = await run(request(cwd, command, { sandbox: { network: true } }));
  assert.deepEqual({ ...setup, durationMs: 0 }, { exitCode: 0, outputTail: "read-only\nserved\n", timedOut: false, durationMs: 0 });
  const check = await run(request(cwd, command, { sandbox: { network: false } }));
  assert.deepEqual({ ...check, durationMs: 0 }, { exitCode: 0, outputTail: "read-only\nrefused\n", timedOut: false, durationMs: 0 });
  assert.equal(await readFile(join(cwd, "made"), "utf8"), "made\n");
  const unsandboxed = await run(request(cwd, `head -1 </dev/tcp/127.0.0.1/${port}`));
  assert.equal(unsandboxed.outputTail, "served\n");
});
