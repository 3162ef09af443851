/**
 * MCP servers as tools through the built CLI (issue 27): a stdio server written with the SDK's
 * server side, started per trial, its tools called by a scripted model as mcp__<server>__<tool>
 * and decided by the policy; a server that crashes mid-call (an error result, one restart; a
 * second crash errors the trial), one that never answers its handshake (mcp_start after the
 * start-up timeout), one with a bad input schema (mcp_invalid naming the tool), a kill of rhema
 * mid-call and the resume (the server started again, the call not run again, no server left), a
 * server whose specs changed on resume (mcp_changed), references to variables --allow-env does
 * not let through (exit 2), the sandbox around a stdio server (as root and as nobody; its program
 * found even where the sandbox hides it), an HTTP
 * server reached with a header from an allowed variable, a matrix cell's servers, and a
 * repository's own MCP configuration left unread; a model's requests carry the MCP tools after the
 * built-ins, the same bytes after a resume.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readRunResults, RunDir } from "../../src/runner/run-dir/run-dir.js";
import { CheckpointStore } from "../../src/store/checkpoint-store.js";
import type { Session } from "../../src/core/session.js";
import { cliEnv, runCli, startCli } from "../support/cli.js";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { writeFiles } from "../support/suite-files.js";
import { hostDir, sandboxSkip } from "../process/sandbox-fixture.js";
import { startHttpMcpServer, writeMcpServer } from "../support/mcp-test-server.js";
import { LINKED_MODULES, ROOT, runCliAsNobody } from "../support/nobody-cli.js";
import { liveRunProcesses, survivorsAfter } from "../support/run-processes.js";
import { waitFor } from "../support/wait.js";

const sandboxMissing = await sandboxSkip();
const q = (text: string): string => JSON.stringify(text);

/** A task whose scripted model makes `steps` (YAML list items), with the server `files` in `mode`. */
function mcpTask(root: string, steps: string, opts: { mode?: string; policy?: string; extra?: string } = {}): string {
  return `prompt: Use the MCP tools.
policy: ${opts.policy ?? "{ version: 1, default: deny, rules: [ { allow: { tools: [\"mcp__files__*\"] } } ] }"}
mcp:
  files: { command: ${q(process.execPath)}, args: [${q(join(root, "server.mjs"))}, ${opts.mode ?? "normal"}]${opts.extra ?? ""} }
model:
  provider: scripted
  script:
${steps}
    - say: done
`;
}

async function sessionOf(out: string, id = "t"): Promise<Session> {
  return (await new CheckpointStore(new RunDir(out).trial({ suite: "suite", id, variant: null, repeat: 1 }).dir).load())!;
}

/** The tool results of a session, in order: [text, isError]. */
function results(session: Session): [string, boolean][] {
  return session.messages.flatMap((m) => m.content.flatMap((b) => (b.type === "tool_result" ? [[typeof b.content === "string" ? b.content : JSON.stringify(b.content), b.isError === true] as [string, boolean]] : [])));
}

async function setUp(t: { after(fn: () => unknown): void }, tasks: Record<string, string>): Promise<{ root: string; out: string }> {
  const root = await hostDir(t, "rhema-mcp-");
  await writeFiles(root, tasks);
  await writeMcpServer(join(root, "server.mjs"));
  return { root, out: join(root, "run") };
}

test("an MCP server's tools are called as mcp__server__tool, decided by the policy, stamped into the session, listed by server in the environment", async (t) => {
  const { root, out } = await setUp(t, {});
  await writeFiles(root, {
    "suite/t.yaml": mcpTask(root, `    - calls:
        - { call: mcp__files__echo, input: { text: hi } }
        - { call: mcp__files__write, input: { path: made.txt, text: x } }
        - { call: mcp__files__echo, input: { text: 5 } }`, { policy: "{ version: 1, default: deny, rules: [ { allow: { tools: [mcp__files__echo] } } ] }" }),
  });
  const run = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(run.code, 0, run.stderr + run.stdout);
  const session = await sessionOf(out);
  const [echo, write, bad] = results(session);
  assert.deepEqual(echo, ["echo: hi", false]);
  assert.equal(write![1], true);
  assert.match(write![0], /^denied by default/);
  assert.equal(bad![1], true);
  assert.match(bad![0], /Invalid input for `mcp__files__echo`/);
  assert.deepEqual(Object.keys(session.mcpTools!), ["files"]);
  assert.deepEqual(session.mcpTools!.files!.map((s) => s.name), ["mcp__files__crash", "mcp__files__echo", "mcp__files__sleep", "mcp__files__write"]);
  assert.match(session.environment!, /^MCP servers: files \(their tools are named mcp__<server>__<tool>\)$/m);
  assert.doesNotMatch(session.environment!, /mcp__files__echo/);
  assert.equal(existsSync(join(new RunDir(out).trial({ suite: "suite", id: "t", variant: null, repeat: 1 }).dir, "workspace", "made.txt")), false, "the denied write never ran");
  assert.doesNotMatch(run.stderr, /not a built-in tool|no task using this policy declares/);
  assert.deepEqual(await liveRunProcesses({ mark: join(root, "server.mjs") }), [], "the server stopped with the trial");
});

test("a server that crashes mid-call: an error result the model reads and one restart; a second crash errors the trial", async (t) => {
  const { root, out } = await setUp(t, {});
  await writeFiles(root, {
    "suite/t.yaml": mcpTask(root, `    - call: mcp__files__crash
    - call: mcp__files__echo
      input: { text: again }
    - call: mcp__files__crash`),
  });
  const run = await runCli(["run", "suite", "--out", out, "--sandbox", "off"], { cwd: root });
  assert.equal(run.code, 1, run.stderr + run.stdout);
  const [result] = await readRunResults(out);
  assert.equal(result!.status, "errored");
  assert.equal(result!.error?.code, "mcp_crashed");
  const [crash, echo] = results(await sessionOf(out));
  assert.equal(crash![1], true);
  assert.match(crash![0], /the MCP server files exited during this call/);
  assert.deepEqual(echo, ["echo: again", false], "the restarted server answers");
  const starts = (await readFile(join(new RunDir(out).trial({ suite: "suite", id: "t", variant: null, repeat: 1 }).dir, "workspace", "mcp-starts.log"), "utf8")).match(/^start/gm);
  assert.equal(starts?.length, 2, "started once, restarted once, not again");
  assert.deepEqual(await liveRunProcesses({ mark: join(root, "server.mjs") }), []);
});

test("a server that never finishes its handshake errors the trial mcp_start after its start-up timeout, and is stopped", async (t) => {
  const { root, out } = await setUp(t, {});
  await writeFiles(root, { "suite/t.yaml": mcpTask(root, `    - call: mcp__files__echo
      input: { text: hi }`, { mode: "hang", extra: ", startTimeout: 1s" }) });
  const started = Date.now();
  const run = await runCli(["run", "suite", "--out", out, "--sandbox", "off"], { cwd: root });
  assert.equal(run.code, 1, run.stderr + run.stdout);
  const [result] = await readRunResults(out);
  assert.equal(result!.error?.code, "mcp_start");
  assert.match(result!.error!.message, /the MCP server files did not start: it did not answer within 1 s \(startTimeout\)/);
  assert.ok(Date.now() - started < 20_000);
  const log = await readFile(join(new RunDir(out).trial({ suite: "suite", id: "t", variant: null, repeat: 1 }).dir, "workspace", "mcp-starts.log"), "utf8");
  assert.match(log, /^stopped$/m, "the trial stopped the server it gave up on");
  assert.deepEqual(await liveRunProcesses({ mark: join(root, "server.mjs") }), []);
});

test("a server with a tool whose input schema is not JSON Schema errors the trial mcp_invalid naming the server and the tool", async (t) => {
  const { root, out } = await setUp(t, {});
  await writeFiles(root, { "suite/t.yaml": mcpTask(root, "    - say: hello", { mode: "badschema" }) });
  const run = await runCli(["run", "suite", "--out", out, "--sandbox", "off"], { cwd: root });
  assert.equal(run.code, 1, run.stderr + run.stdout);
  const [result] = await readRunResults(out);
  assert.equal(result!.error?.code, "mcp_invalid");
  assert.match(result!.error!.message, /the MCP server files offers the tool "bad", which rhema cannot use/);
});

test("a kill of rhema mid-call leaves no server; the resume starts it again, answers the started call as interrupted without running it", async (t) => {
  const { root, out } = await setUp(t, {});
  await writeFiles(root, { "suite/t.yaml": mcpTask(root, "    - call: mcp__files__sleep") });
  const workspace = join(new RunDir(out).trial({ suite: "suite", id: "t", variant: null, repeat: 1 }).dir, "workspace");
  const log = join(workspace, "mcp-starts.log");
  const first = startCli(["run", "suite", "--out", out], { cwd: root });
  await waitFor(async () => (await readFile(log, "utf8").catch(() => "")).includes("sleeping"));
  first.child.kill("SIGKILL");
  await first.done;
  assert.deepEqual(await survivorsAfter({ mark: join(root, "server.mjs") }, 10_000), [], "no server outlives rhema");
  const resumed = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
  const text = await readFile(log, "utf8");
  assert.equal(text.match(/^start/gm)?.length, 2, "restarted on resume");
  assert.equal(text.match(/^sleeping/gm)?.length, 1, "the started call was not run again");
  const [sleep] = results(await sessionOf(out));
  assert.equal(sleep![1], true);
  assert.match(sleep![0], /interrupted/);
  assert.deepEqual(await liveRunProcesses({ mark: join(root, "server.mjs") }), []);
});

/** Starts a run of suite/t, waits until its server is in the sleep call, and SIGKILLs rhema. */
async function killedMidSleep(root: string, out: string): Promise<void> {
  const log = join(new RunDir(out).trial({ suite: "suite", id: "t", variant: null, repeat: 1 }).dir, "workspace", "mcp-starts.log");
  const run = startCli(["run", "suite", "--out", out, "--sandbox", "off"], { cwd: root });
  await waitFor(async () => (await readFile(log, "utf8").catch(() => "")).includes("sleeping"));
  run.child.kill("SIGKILL");
  await run.done;
  // Unsandboxed, the death-watch stops the server.
  assert.deepEqual(await survivorsAfter({ mark: join(root, "server.mjs") }, 10_000), [], "no server outlives rhema");
}

test("a server whose tool specs changed since the checkpoint: mcp_changed naming it, unless --restart-changed continues with the new specs", async (t) => {
  const { root } = await setUp(t, {});
  await writeFiles(root, { "suite/t.yaml": mcpTask(root, "    - call: mcp__files__sleep") });
  const [refusedOut, restartedOut] = [join(root, "run-a"), join(root, "run-b")];
  await killedMidSleep(root, refusedOut);
  await killedMidSleep(root, restartedOut);
  // The server's echo now has another description.
  await writeMcpServer(join(root, "server.mjs"), (text) => text.replace('process.argv[2] ?? "normal"', '"changed"'));
  const refused = await runCli(["run", "suite", "--out", refusedOut, "--sandbox", "off"], { cwd: root });
  assert.equal(refused.code, 1, refused.stderr + refused.stdout);
  const [result] = await readRunResults(refusedOut);
  assert.equal(result!.error?.code, "mcp_changed");
  assert.match(result!.error!.message, /the tools of the MCP server files changed since this trial's checkpoint; --restart-changed continues the trial with the new tools/);
  const restarted = await runCli(["run", "suite", "--out", restartedOut, "--sandbox", "off", "--restart-changed"], { cwd: root });
  assert.equal(restarted.code, 0, restarted.stderr + restarted.stdout);
  const session = await sessionOf(restartedOut);
  assert.equal(session.mcpTools!.files!.find((s) => s.name === "mcp__files__echo")!.description, "Echoes text back, changed");
});

test("an MCP env or header value that names a variable --allow-env does not let through is exit 2 at its file, line and field", async (t) => {
  const { root, out } = await setUp(t, {});
  await writeFiles(root, { "suite/t.yaml": mcpTask(root, "    - say: hi", { extra: ", env: { TOKEN: \"${MY_TOKEN}\" }" }) });
  const run = await runCli(["run", "suite", "--out", out], { cwd: root, env: cliEnv({ MY_TOKEN: "tok-1" }) });
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /suite\/t\.yaml:4:\d+: mcp\.files\.env\.TOKEN: \$\{MY_TOKEN\} names a variable --allow-env does not let through/);
});

/** Root here: the same test as nobody too (setpriv), since the sandbox takes another form for an unprivileged user. */
for (const nobody of ROOT ? [false, true] : [false]) {
  test(`a sandboxed stdio server cannot write outside the workspace${nobody ? " (as nobody)" : ""}`, { skip: sandboxMissing || (nobody && LINKED_MODULES) }, async (t) => {
    const { root, out } = await setUp(t, {});
    if (nobody) {
      await chmod(root, 0o777);
      await mkdir(join(root, "home"), { mode: 0o777 });
    }
    const outside = join(root, "outside.txt");
    await writeFiles(root, {
      "suite/t.yaml": mcpTask(root, `    - calls:
        - { call: mcp__files__write, input: { path: inside.txt, text: in } }
        - { call: mcp__files__write, input: { path: ${q(outside)}, text: out } }`),
    });
    const args = ["run", "suite", "--out", out, "--sandbox", "bwrap"];
    // The sandbox hides the home folder: nobody's is one of its own, beside the server's script.
    const run = nobody ? await runCliAsNobody(t, args, { cwd: root, env: { HOME: join(root, "home") } }) : await runCli(args, { cwd: root });
    assert.equal(run.code, 0, run.stderr + run.stdout + JSON.stringify((await readRunResults(out))[0]?.error));
    const [inside, escape] = results(await sessionOf(out));
    assert.deepEqual(inside, ["wrote inside.txt", false]);
    assert.equal(escape![1], true);
    assert.match(escape![0], /cannot write: E(ROFS|ACCES|PERM)/);
    assert.equal(existsSync(outside), false);
  });
}

test("a sandboxed stdio server whose program sits where the sandbox shows nothing (a node under /tmp) is started: its program is bound back read-only", { skip: sandboxMissing }, async (t) => {
  const { root, out } = await setUp(t, {});
  const hidden = await mkdtemp(join("/tmp", "rhema-mcp-node-"));
  t.after(() => rm(hidden, { recursive: true, force: true }));
  await chmod(hidden, 0o755);
  const node = join(hidden, "node");
  await copyFile(process.execPath, node);
  await chmod(node, 0o755);
  await writeFiles(root, {
    "suite/t.yaml": mcpTask(root, "    - call: mcp__files__echo\n      input: { text: hidden }").replace(`command: ${q(process.execPath)}`, `command: ${q(node)}`),
  });
  const run = await runCli(["run", "suite", "--out", out, "--sandbox", "bwrap"], { cwd: root });
  assert.equal(run.code, 0, run.stderr + run.stdout + JSON.stringify((await readRunResults(out))[0]?.error));
  assert.deepEqual(results(await sessionOf(out)), [["echo: hidden", false]]);
});

test("a streamable-HTTP server is reached with a header from an --allow-env variable", async (t) => {
  const { root, out } = await setUp(t, {});
  const token = "mcp-tok-" + Math.random().toString(36).slice(2);
  const server = await startHttpMcpServer(t, { name: "Authorization", value: `Bearer ${token}` });
  await writeFiles(root, {
    "suite/t.yaml": `prompt: Use the web tools.
policy: { version: 1, default: deny, rules: [ { allow: { tools: ["mcp__web__*"] } } ] }
mcp:
  web: { url: ${q(server.url)}, headers: { Authorization: "Bearer \${MCP_TOKEN}" } }
model:
  provider: scripted
  script:
    - call: mcp__web__echo
      input: { text: over http }
    - say: done
`,
  });
  const run = await runCli(["run", "suite", "--out", out, "--allow-env", "MCP_TOKEN"], { cwd: root, env: cliEnv({ MCP_TOKEN: token }) });
  assert.equal(run.code, 0, run.stderr + run.stdout);
  assert.deepEqual(results(await sessionOf(out)), [["echo: over http", false]]);
  assert.deepEqual(server.calls, ["echo"]);
  assert.equal(server.refused(), 0);
});

test("a matrix cell's mcp axis gives the task its servers; the cell without them has no such tool", async (t) => {
  const { root, out } = await setUp(t, {});
  await writeFiles(root, {
    "suite/t.yaml": `prompt: Use the MCP tools.
policy: { version: 1, default: deny, rules: [ { allow: { tools: ["mcp__files__*"] } } ] }
model:
  provider: scripted
  script:
    - call: mcp__files__echo
      input: { text: cell }
    - say: done
`,
    "suite/matrix.yaml": `matrix:
  mcp:
    - { id: none, servers: {} }
    - id: files
      servers:
        files: { command: ${q(process.execPath)}, args: [${q(join(root, "server.mjs"))}] }
`,
  });
  const run = await runCli(["run", "suite", "--out", out, "--matrix", join(root, "suite", "matrix.yaml"), "--sandbox", "off"], { cwd: root });
  assert.equal(run.code, 0, run.stderr + run.stdout);
  const cell = async (variant: string) => (await new CheckpointStore(new RunDir(out).trial({ suite: "suite", id: "t", variant, repeat: 1 }).dir).load())!;
  assert.deepEqual(results(await cell("mcp=files")), [["echo: cell", false]]);
  const [none] = results(await cell("mcp=none"));
  assert.equal(none![1], true);
  assert.match(none![0], /Unknown tool "mcp__files__echo"/);
});

test("MCP configuration in the repository under test (.mcp.json) is never loaded", async (t) => {
  const { root, out } = await setUp(t, {});
  const server = { command: process.execPath, args: [join(root, "server.mjs")] };
  await writeFiles(root, {
    "ws/.mcp.json": JSON.stringify({ mcpServers: { files: server } }),
    "ws/.vscode/mcp.json": JSON.stringify({ servers: { files: server } }),
    "suite/t.yaml": `prompt: Use the MCP tools.
workspace: { from: ../ws }
policy: { version: 1, default: allow, rules: [ { deny: { tools: [write_file] } } ] }
model:
  provider: scripted
  script:
    - call: mcp__files__echo
      input: { text: hi }
    - say: done
`,
  });
  const run = await runCli(["run", "suite", "--out", out, "--sandbox", "off"], { cwd: root });
  assert.equal(run.code, 0, run.stderr + run.stdout);
  const session = await sessionOf(out);
  const [echo] = results(session);
  assert.match(echo![0], /^Unknown tool "mcp__files__echo"/);
  assert.equal(session.mcpTools, undefined);
  assert.doesNotMatch(session.environment!, /MCP/);
  assert.equal(existsSync(join(new RunDir(out).trial({ suite: "suite", id: "t", variant: null, repeat: 1 }).dir, "workspace", "mcp-starts.log")), false, "no server started");
});

test("an HTTP server that drops a call's connection: an error result the model reads, then the server is reached again", async (t) => {
  const { root, out } = await setUp(t, {});
  const server = await startHttpMcpServer(t, { name: "X-Key", value: "k1" });
  await writeFiles(root, {
    "suite/t.yaml": `prompt: Use the web tools.
policy: { version: 1, default: deny, rules: [ { allow: { tools: ["mcp__web__*"] } } ] }
mcp:
  web: { url: ${q(server.url)}, headers: { X-Key: "\${MCP_KEY}" } }
model:
  provider: scripted
  script:
    - call: mcp__web__crash
    - call: mcp__web__echo
      input: { text: back }
    - say: done
`,
  });
  const run = await runCli(["run", "suite", "--out", out, "--allow-env", "MCP_KEY"], { cwd: root, env: cliEnv({ MCP_KEY: "k1" }) });
  assert.equal(run.code, 0, run.stderr + run.stdout);
  const [crash, echo] = results(await sessionOf(out));
  assert.equal(crash![1], true);
  assert.match(crash![0], /^the MCP server web dropped the connection during this call, so it may or may not have had its effect; rhema connected to it again/);
  assert.deepEqual(echo, ["echo: back", false]);
  assert.deepEqual(server.calls, ["crash", "echo"]);
});

test("a model's requests carry the MCP tools after the built-ins, and a resume after a kill mid-call sends the same tools and system byte for byte", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  const { root, out } = await setUp(t, {});
  await writeFiles(root, {
    "suite/t.yaml": `prompt: Use the MCP tools.
policy: { version: 1, default: deny, rules: [ { allow: { tools: ["mcp__files__*"] } } ] }
mcp:
  files: { command: ${q(process.execPath)}, args: [${q(join(root, "server.mjs"))}, normal] }
model: { provider: anthropic, name: claude-test }
`,
  });
  server.reply(
    { kind: "stream", blocks: [{ type: "tool_use", id: "toolu_sleep", name: "mcp__files__sleep", input: {} }] },
    { kind: "stream", blocks: [{ type: "text", text: "Done." }] },
  );
  const env = cliEnv({ ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: server.baseUrl });
  const log = join(new RunDir(out).trial({ suite: "suite", id: "t", variant: null, repeat: 1 }).dir, "workspace", "mcp-starts.log");
  const first = startCli(["run", "suite", "--out", out, "--sandbox", "off"], { cwd: root, env });
  await waitFor(async () => (await readFile(log, "utf8").catch(() => "")).includes("sleeping"));
  first.child.kill("SIGKILL");
  await first.done;
  const resumed = await runCli(["run", "suite", "--out", out, "--sandbox", "off"], { cwd: root, env });
  assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
  assert.equal(server.bodies.length, 2);
  const [before, after] = server.bodies as Array<{ tools: Array<{ name: string }>; system: unknown; messages: unknown[] }>;
  const names = before!.tools.map((tool) => tool.name);
  assert.deepEqual(names.filter((n) => n.startsWith("mcp__")), ["mcp__files__crash", "mcp__files__echo", "mcp__files__sleep", "mcp__files__write"]);
  assert.ok(names.indexOf("mcp__files__crash") > names.indexOf("shell"), "after the built-ins");
  // The cache marks move to the newest message each step; the rest of the prefix is the same bytes.
  const unmarked = (value: unknown) => JSON.stringify(value, (key, v: unknown) => (key === "cache_control" ? undefined : v));
  assert.equal(unmarked(after!.tools), unmarked(before!.tools));
  assert.equal(unmarked(after!.system), unmarked(before!.system));
  assert.equal(unmarked(after!.messages.slice(0, before!.messages.length + 1)).startsWith(unmarked(before!.messages).slice(0, -1)), true, "the resumed request extends the first one's messages");
  assert.deepEqual(server.violations, []);
});
