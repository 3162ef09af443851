/**
 * The OS sandbox through the built CLI: scripted tasks whose shell calls, setup commands and
 * checks try to get out — write outside the workspace, read rhema's environment through /proc,
 * reach a TCP server of the test's on 127.0.0.1, read another task's session — and the files
 * they leave in their workspaces say what they could do. Also: the example suite under
 * `--sandbox bwrap`, exit 3 when bwrap is missing or (a stand-in) refused by AppArmor, `auto`'s
 * warning, strictest-wins, and what `rhema validate` shows. Tests that need bwrap skip, saying
 * why, where it cannot run — unless RHEMA_REQUIRE_SANDBOX=1 (CI), where they fail.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { lstat, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { cliEnv, runCli } from "../support/cli.js";
import { repoRoot } from "../support/paths.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { hostDir, sandboxSkip, wrappedBwrap } from "../process/sandbox-fixture.js";

const skip = await sandboxSkip();
const SECRET = `sk-test-${randomBytes(12).toString("hex")}`;
const q = (text: string): string => JSON.stringify(text);

/** A TCP server on 127.0.0.1 that counts the connections it gets. */
async function countingServer(t: { after(fn: () => unknown): void }): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { port: address.port, connections: () => connections };
}

/** `cmd` run for its effect; `label ok` or `label blocked` appended to `file` in the workspace. */
const attempt = (label: string, cmd: string, file: string): string =>
  `if { ${cmd}; } 2>/dev/null; then echo "${label} ok"; else echo "${label} blocked"; fi >> ${file}`;

test("sandboxed shell calls, setup and checks: writes outside the workspace, rhema's environment, the network and another task's session are out of reach", { skip }, async (t) => {
  const root = await hostDir(t);
  const home = join(root, "home");
  await mkdir(home);
  const run = join(root, "run");
  const server = await countingServer(t);
  const tcp = `echo > /dev/tcp/127.0.0.1/${server.port}`;
  const tag = randomBytes(6).toString("hex");
  const hostTmp = `/tmp/rhema-sbx-${tag}.txt`;
  const otherSession = join(run, "tasks", "sbx", "a-other", "default", "1", "session.json");
  const escape = [
    attempt("workspace", "echo in > inside.txt", "writes.txt"),
    attempt("tmp", `echo x > ${hostTmp}`, "writes.txt"),
    attempt("home", `echo x > "$HOME/leak-${tag}.txt"`, "writes.txt"),
    attempt("root", `echo x > ${root}/escape.txt`, "writes.txt"),
    `tr '\\0' '\\n' < /proc/$PPID/environ > ppid-environ.txt 2>&1`,
    `tr '\\0' '\\n' < /proc/1/environ > pid1-environ.txt 2>&1`,
    attempt("net", tcp, "net.txt"),
    `cat ${otherSession} > stolen.txt 2>&1; cat ../session.json >> stolen.txt 2>&1; ls ${run} >> stolen.txt 2>&1`,
  ].join("\n");
  const checks = [
    { name: "reads its final answer", run: `grep -q "escape attempted" "$RHEMA_FINAL_ANSWER"` },
    { name: "cannot write outside", run: `! { echo x > ${root}/check-escape.txt; } 2>/dev/null` },
    { name: "has no network", run: `! { ${tcp}; } 2>/dev/null` },
    { name: "cannot read the other session", run: `! cat ${otherSession} 2>/dev/null` },
  ];
  await writeFiles(root, {
    // Runs first (concurrency 1): a finished task whose session the next one goes after; its policy opens the network.
    "sbx/a-other.yaml": `prompt: Connect.
policy: { default: allow, rules: [], network: allow }
model:
  provider: scripted
  script:
    - call: write_file
      input: { path: net.sh, content: ${q(attempt("net", tcp, "net.txt") + "\n")} }
    - call: shell
      input: { command: bash net.sh }
    - say: connected
`,
    // Asks for no sandbox: --sandbox bwrap wins.
    "sbx/b-escape.yaml": `prompt: Get out.
sandbox: off
policy: { default: allow, rules: [] }
workspace:
  setup:
    - ${q(attempt("setup-net", tcp, "setup.txt"))}
    - ${q(attempt("setup-root", `echo x > ${root}/setup-escape.txt`, "setup.txt"))}
model:
  provider: scripted
  script:
    # In a script, so that the policy (which would refuse the writes outside) cannot see them: the OS must.
    - call: write_file
      input: { path: escape.sh, content: ${q(escape + "\n")} }
    - call: shell
      input: { command: bash escape.sh }
    - say: escape attempted
checks:
${checks.map((c) => `  - { name: ${q(c.name)}, run: ${q(c.run)} }`).join("\n")}
`,
  });
  const result = await runCli(["run", "sbx", "--out", run, "--concurrency", "1", "--sandbox", "bwrap"], {
    cwd: root, env: cliEnv({ HOME: home, ANTHROPIC_API_KEY: SECRET, RHEMA_TEST_TOKEN: SECRET }),
  });
  assert.equal(result.code, 0, result.stdout + result.stderr + await readFile(join(run, "tasks", "sbx", "b-escape", "default", "1", "events.jsonl"), "utf8"));
  const ws = join(run, "tasks", "sbx", "b-escape", "default", "1", "workspace");
  const read = (name: string) => readFile(join(ws, name), "utf8");

  assert.equal(await read("writes.txt"), "workspace ok\ntmp ok\nhome ok\nroot blocked\n", "/tmp and $HOME are private: writes land there, not on the host");
  assert.equal(await read("inside.txt"), "in\n");
  assert.equal(existsSync(hostTmp), false, `${hostTmp} is not on the host`);
  assert.equal(existsSync(join(home, `leak-${tag}.txt`)), false, "the runner's $HOME got nothing");
  assert.equal(existsSync(join(root, "escape.txt")), false);
  for (const file of ["ppid-environ.txt", "pid1-environ.txt"]) {
    const text = await read(file);
    assert.ok(!text.includes(SECRET), `${file} shows none of rhema's secrets:\n${text}`);
    assert.ok(!text.includes(root), `${file} shows none of rhema's environment (HOME):\n${text}`);
  }
  assert.equal(await read("net.txt"), "net blocked\n", "the shell tool has no network");
  const stolen = await read("stolen.txt");
  assert.ok(!stolen.includes('"messages"'), `no session was readable:\n${stolen}`);
  assert.match(stolen, /a-other\/default\/1\/session\.json: No such file or directory/);
  assert.match(stolen, /\.\.\/session\.json: No such file or directory/);

  assert.equal(await read("setup.txt"), "setup-net ok\nsetup-root blocked\n", "setup has the network, and the same walls");
  assert.equal(existsSync(join(root, "setup-escape.txt")), false);
  assert.equal(existsSync(join(root, "check-escape.txt")), false);
  assert.equal(await readFile(join(run, "tasks", "sbx", "a-other", "default", "1", "workspace", "net.txt"), "utf8"), "net ok\n", "network: allow opens it to the shell");
  assert.equal(server.connections(), 2, "the setup command and the task with network: allow connected; nothing else did");

  const results = Object.fromEntries((await readRunResults(run)).map((r) => [r.id, r]));
  assert.deepEqual(results["b-escape"]!.checks.map((c) => [c.name, c.passed]), checks.map((c) => [c.name, true]));
  assert.deepEqual(results["b-escape"]!.sandbox, { mode: "bwrap", network: "deny" });
  assert.deepEqual(results["a-other"]!.sandbox, { mode: "bwrap", network: "allow" });
  const stats = JSON.parse(await readFile(join(run, "stats.json"), "utf8"));
  assert.deepEqual(stats.total.sandbox, { mode: "bwrap", tasks: { bwrap: 2, none: 0, off: 0 } });
  assert.match(await readFile(join(run, "summary.md"), "utf8"), /\nSandbox: bwrap for 2 tasks \(network per policy\)\.\n/);
  const session = await readFile(join(run, "tasks", "sbx", "b-escape", "default", "1", "session.json"), "utf8");
  assert.match(session, /Sandbox: shell commands run in an OS sandbox \(bubblewrap\).*there is no network/, "the environment report tells the model");
});

test("as root too, a task's shell command, setup and checks hold no capability and reach no host socket or credential file; a HOME that does not exist does not matter", { skip: skip || (process.getuid?.() !== 0 && "needs root") }, async (t) => {
  const root = await hostDir(t);
  const run = join(root, "run");
  const tag = randomBytes(6).toString("hex");
  const runSockets = join("/run", `rhema-cli-${tag}`);
  const xdg = join(root, "xdg");
  await mkdir(runSockets);
  t.after(() => rm(runSockets, { recursive: true, force: true }));
  await mkdir(xdg);
  const connections: string[] = [];
  for (const path of [join(runSockets, "s.sock"), join(xdg, "s.sock")]) {
    const server = createServer((socket) => {
      connections.push(path);
      socket.end("hello\n");
    });
    await new Promise<void>((r) => server.listen(path, r));
    t.after(() => new Promise<void>((r) => server.close(() => r())));
  }
  const credentials = join(root, "gcp.json");
  await writeFile(credentials, `{"private_key":"${SECRET}"}\n`);
  const client = 'require("net").connect(process.argv[1]).on("data", () => process.exit(0)).on("error", () => process.exit(1))';
  const connect = (path: string) => `${process.execPath} -e '${client}' ${path}`;
  const probe = [
    "grep '^CapEff' /proc/self/status | cut -f2 > caps.txt",
    "id -u > uid.txt",
    attempt("socket-run", connect(join(runSockets, "s.sock")), "escapes.txt"),
    attempt("socket-xdg", connect(join(xdg, "s.sock")), "escapes.txt"),
    // Named so that the redactor, which hides the variable's value (this path) from the model, cannot
    // turn it into a placeholder; grepped for a word it does not redact either.
    attempt("credentials", `grep -q private_key "${root}"/gcp.json`, "escapes.txt"),
    attempt("umount-run", `umount -l ${run} && ls ${run}/tasks`, "escapes.txt"),
    attempt("userns", "unshare -Ur true", "escapes.txt"),
  ].join("\n");
  const held = `grep -q '^CapEff:\\s*0*$' /proc/self/status && ! ${connect(join(runSockets, "s.sock"))}`;
  await writeFiles(root, {
    "s/t.yaml": `prompt: Get out.
policy: { default: allow, rules: [] }
workspace:
  setup:
    - ${q(`${held} && echo held > setup.txt`)}
model:
  provider: scripted
  script:
    - call: write_file
      input: { path: probe.sh, content: ${q(probe + "\n")} }
    - call: shell
      input: { command: bash probe.sh }
    - say: tried
checks:
  - { name: held, run: ${q(held)} }
`,
  });
  const result = await runCli(["run", "s", "--out", run, "--sandbox", "bwrap"], {
    cwd: root, env: cliEnv({ HOME: `/nonexistent-${tag}`, XDG_RUNTIME_DIR: xdg, GOOGLE_APPLICATION_CREDENTIALS: credentials }),
  });
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const ws = join(run, "tasks", "s", "t", "default", "1", "workspace");
  const read = (name: string) => readFile(join(ws, name), "utf8");
  assert.equal(await read("caps.txt"), "0000000000000000\n");
  assert.equal(await read("uid.txt"), "65534\n", "nobody inside");
  assert.equal(await read("escapes.txt"), ["socket-run", "socket-xdg", "credentials", "umount-run", "userns"].map((name) => `${name} blocked\n`).join(""));
  assert.equal(await read("setup.txt"), "held\n");
  assert.deepEqual(connections, [], "no host socket was reached");
  assert.equal((await lstat(join(ws, "caps.txt"))).uid, 0, "what the command made belongs to rhema's uid outside");
  assert.deepEqual((await readRunResults(run))[0]!.checks.map((c) => [c.name, c.passed]), [["held", true]]);
});

test("where no user namespace can be made, a root rhema sandboxes with every capability dropped; a bwrap whose commands keep them is refused (bwrap: exit 3; auto: NO SANDBOX)", { skip: skip || (process.getuid?.() !== 0 && "needs root") }, async (t) => {
  const root = await hostDir(t);
  const run = join(root, "run");
  const probe = [
    "grep '^CapEff' /proc/self/status | cut -f2 > caps.txt",
    "id -u > uid.txt",
    attempt("umount-run", `umount -l ${run} && ls ${run}/tasks`, "escapes.txt"),
    attempt("remount", "mount -o remount,bind,rw /", "escapes.txt"),
  ].join("\n");
  await writeFiles(root, {
    "s/t.yaml": `prompt: Get out.
policy: { default: allow, rules: [] }
model:
  provider: scripted
  script:
    - call: write_file
      input: { path: probe.sh, content: ${q(probe + "\n")} }
    - call: shell
      input: { command: bash probe.sh }
    - say: tried
`,
  });
  const dropping = await wrappedBwrap(await tempDir(t), true, false);
  const result = await runCli(["run", "s", "--out", run, "--sandbox", "bwrap"], { cwd: root, env: cliEnv({ PATH: `${dropping}:${process.env.PATH}` }) });
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const ws = join(run, "tasks", "s", "t", "default", "1", "workspace");
  assert.deepEqual(await Promise.all(["caps.txt", "uid.txt", "escapes.txt"].map((f) => readFile(join(ws, f), "utf8"))),
    ["0000000000000000\n", "0\n", "umount-run blocked\nremount blocked\n"]);
  assert.equal((await readRunResults(run))[0]!.sandbox?.mode, "bwrap");

  const keeping = await wrappedBwrap(await tempDir(t), true, true);
  const refused = await runCli(["run", "s", "--out", join(root, "run2"), "--sandbox", "bwrap"], { cwd: root, env: cliEnv({ PATH: `${keeping}:${process.env.PATH}` }) });
  assert.equal(refused.code, 3, refused.stdout + refused.stderr);
  assert.match(refused.stderr, /cannot be made here: .*No permissions to creating new namespace.*; and without one \(--cap-drop ALL, as root\): a command in the sandbox \(--cap-drop ALL\) kept capabilities: CapPrm/);
  const auto = await runCli(["run", "s", "--out", join(root, "run3")], { cwd: root, env: cliEnv({ PATH: `${keeping}:${process.env.PATH}` }) });
  assert.equal(auto.code, 0, auto.stdout + auto.stderr);
  assert.match(auto.stderr, /NO SANDBOX: .*kept capabilities/);
});

test("the example suite passes under --sandbox bwrap as it does without", { skip }, async (t) => {
  const out = join(await hostDir(t), "run");
  const result = await runCli(["run", "tasks/", "--out", out, "--sandbox", "bwrap"], { cwd: repoRoot });
  assert.equal(result.code, 1, result.stderr);
  const results = await readRunResults(out);
  assert.deepEqual(results.filter((r) => r.id === "flaky-fix").map((r) => [r.trial?.repeat, r.status, r.sandbox?.mode]),
    [[1, "passed", "bwrap"], [2, "passed", "bwrap"], [3, "failed", "bwrap"], [4, "failed", "bwrap"], [5, "passed", "bwrap"]]);
  assert.deepEqual(Object.fromEntries(results.filter((r) => r.id !== "flaky-fix").map((r) => [`${r.suite}/${r.id}`, [r.status, r.sandbox?.mode]])), {
    "arithmetic/add-multiply": ["passed", "bwrap"],
    "arithmetic/fix-add": ["passed", "bwrap"],
    "arithmetic/wrong-fix": ["failed", "bwrap"],
    "refactor/rename-calc": ["passed", "bwrap"],
    "release/publish": ["failed", "bwrap"],
  });
  assert.doesNotMatch(result.stderr, /NO SANDBOX/);
});

/** A folder holding only a `bwrap` that fails as AppArmor makes the real one fail on GitHub's ubuntu-24.04 runners. */
async function appArmorBwrap(root: string): Promise<string> {
  const bin = join(root, "fake-bin");
  await mkdir(bin);
  await writeFile(join(bin, "bwrap"), "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n", { mode: 0o755 });
  return bin;
}

const SMALL_TASK = `prompt: Write a file.
policy: { default: allow, rules: [] }
model: { provider: scripted, script: [ { call: shell, input: { command: "echo hi > hi.txt" } }, { say: done } ] }
checks:
  - { name: written, run: "test -f hi.txt" }
`;

test("--sandbox bwrap where bwrap is missing, or refused by AppArmor, exits 3 before anything runs, saying which and what to do", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "s/t.yaml": SMALL_TASK });
  const empty = join(root, "empty-bin");
  await mkdir(empty);
  const missing = await runCli(["run", "s", "--out", "run", "--sandbox", "bwrap"], { cwd: root, env: cliEnv({ PATH: empty }) });
  assert.equal(missing.code, 3, missing.stdout + missing.stderr);
  assert.match(missing.stderr, /^rhema: the bwrap sandbox was asked for \(--sandbox\) but cannot be made here: bwrap \(bubblewrap\) is not installed: not found on /m);
  assert.match(missing.stderr, /To fix: install bubblewrap \(Debian\/Ubuntu: `apt-get install bubblewrap`/);
  assert.equal(existsSync(join(root, "run")), false, "nothing was written");

  const fake = await appArmorBwrap(root);
  const refused = await runCli(["run", "s", "--out", "run", "--sandbox", "bwrap"], { cwd: root, env: cliEnv({ PATH: `${fake}:${process.env.PATH}` }) });
  assert.equal(refused.code, 3, refused.stdout + refused.stderr);
  assert.match(refused.stderr, /bwrap said "bwrap: setting up uid map: Permission denied": AppArmor restricts unprivileged user namespaces/);
  assert.match(refused.stderr, /sudo sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0/);
  assert.doesNotMatch(refused.stderr, /\n\s+at /, "no stack trace");
  assert.equal(existsSync(join(root, "run")), false);

  // A policy asking for bwrap is as binding as the flag, whatever the task file says.
  await writeFiles(root, { "p/t.yaml": SMALL_TASK.replace("rules: [] }", "rules: [], sandbox: bwrap }") + "sandbox: off\n" });
  const byPolicy = await runCli(["run", "p", "--out", "run", "--sandbox", "off"], { cwd: root, env: cliEnv({ PATH: empty }) });
  assert.equal(byPolicy.code, 3, byPolicy.stdout + byPolicy.stderr);
  assert.match(byPolicy.stderr, /^rhema: the bwrap sandbox was asked for \(policy t\.yaml:2\) but cannot be made here/m);
});

test("--sandbox auto where bwrap cannot run: the tasks run unsandboxed, said once in the output, in the summary, stats.json and result.json", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "s/t1.yaml": SMALL_TASK, "s/t2.yaml": SMALL_TASK });
  const fake = await appArmorBwrap(root);
  const result = await runCli(["run", "s", "--out", "run"], { cwd: root, env: cliEnv({ PATH: `${fake}:${process.env.PATH}` }) });
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.equal(result.stderr.match(/NO SANDBOX/g)?.length, 1, result.stderr);
  assert.match(result.stderr, /rhema: warning: NO SANDBOX: bwrap said .*setting up uid map: Permission denied.*The shell commands, setup and checks of 2 tasks \(sandbox: auto\) run UNSANDBOXED.*kernel\.apparmor_restrict_unprivileged_userns=0/);
  const summary = await readFile(join(root, "run", "summary.md"), "utf8");
  assert.match(summary, /> \[!WARNING\]\n> \*\*No sandbox:\*\* the commands of 2 tasks ran unsandboxed/);
  const stats = JSON.parse(await readFile(join(root, "run", "stats.json"), "utf8"));
  assert.equal(stats.total.sandbox.mode, "none");
  assert.match(stats.total.sandbox.reason, /setting up uid map: Permission denied/);
  assert.deepEqual(stats.total.sandbox.tasks, { bwrap: 0, none: 2, off: 0 });
  for (const r of await readRunResults(join(root, "run"))) {
    assert.equal(r.sandbox?.mode, "none");
    assert.match(r.sandbox?.reason ?? "", /AppArmor/);
  }

  // Off, said explicitly: no probe, no warning.
  const off = await runCli(["run", "s", "--out", "run-off", "--sandbox", "off"], { cwd: root, env: cliEnv({ PATH: `${fake}:${process.env.PATH}` }) });
  assert.equal(off.code, 0, off.stderr);
  assert.doesNotMatch(off.stderr, /SANDBOX/);
  assert.deepEqual((await readRunResults(join(root, "run-off"))).map((r) => r.sandbox), [{ mode: "off", network: "allow" }, { mode: "off", network: "allow" }]);
});

test("rhema validate shows each task's effective sandbox and network, and where each came from", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "s/by-default.yaml": SMALL_TASK,
    "s/by-task.yaml": SMALL_TASK + "sandbox: bwrap\n",
    "s/by-policy.yaml": SMALL_TASK.replace("rules: [] }", "rules: [], sandbox: bwrap, network: allow }") + "sandbox: off\n",
    "s/task-off.yaml": SMALL_TASK + "sandbox: off\n",
    "s/policy-off.yaml": SMALL_TASK.replace("rules: [] }", "rules: [], sandbox: off, network: deny }"),
  });
  const plain = await runCli(["validate", "s"], { cwd: root });
  assert.equal(plain.code, 0, plain.stderr);
  assert.deepEqual(plain.stdout.split("\n").filter((l) => l.startsWith("  ")), [
    "  s/by-default: sandbox auto (default), network deny (default)",
    "  s/by-policy: sandbox bwrap (policy), network allow (policy)",
    "  s/by-task: sandbox bwrap (task), network deny (default)",
    "  s/policy-off: sandbox off (policy), network allow (no sandbox; the policy's network: deny needs a sandbox)",
    "  s/task-off: sandbox off (task), network allow (no sandbox)",
  ]);
  const flagged = await runCli(["validate", "s", "--sandbox", "auto"], { cwd: root });
  assert.deepEqual(flagged.stdout.split("\n").filter((l) => l.startsWith("  ")), [
    "  s/by-default: sandbox auto (flag), network deny (default)",
    "  s/by-policy: sandbox bwrap (policy), network allow (policy)",
    "  s/by-task: sandbox bwrap (task), network deny (default)",
    "  s/policy-off: sandbox auto (flag), network deny (policy)",
    "  s/task-off: sandbox auto (flag), network deny (default)",
  ]);
  // Off on the command line: nothing can deny the network, as the run records it.
  const off = await runCli(["validate", "s", "--sandbox", "off"], { cwd: root });
  assert.equal(off.code, 0, off.stderr);
  assert.deepEqual(off.stdout.split("\n").filter((l) => l.startsWith("  ")), [
    "  s/by-default: sandbox off (flag), network allow (no sandbox)",
    "  s/by-policy: sandbox bwrap (policy), network allow (policy)",
    "  s/by-task: sandbox bwrap (task), network deny (default)",
    "  s/policy-off: sandbox off (flag), network allow (no sandbox; the policy's network: deny needs a sandbox)",
    "  s/task-off: sandbox off (flag), network allow (no sandbox)",
  ]);
  const bad = await runCli(["validate", "s", "--sandbox", "maybe"], { cwd: root });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /sandbox/);
});
