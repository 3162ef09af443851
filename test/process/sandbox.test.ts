/**
 * The bubblewrap sandbox: the argv builder (pure), then real commands in real bwrap — writes
 * outside the workspace do not land on the host, rhema's environment cannot be read from /proc,
 * the network is its own unless allowed, other tasks' files are hidden.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { CancelledError } from "../../src/core/errors.js";
import { FALLBACK_SANDBOX_HOME, type HostView, bwrapArgv, sandboxHome, sandboxIdentity } from "../../src/process/sandbox.js";
import { DEFAULT_PATH, shellTool } from "../../src/tools/shell.js";
import { tempDir } from "../support/temp-dir.js";
import { callTool, textOf, toolContext } from "../tools/tool-harness.js";
import { hostDir, processesMarked, runDirWithTwoTasks, runDriver, sandboxSkip } from "./sandbox-fixture.js";

const skip = await sandboxSkip();

/** A host for the pure argv tests: these folders and files exist (links as `path -> real`), nothing else. */
function fakeHost(entries: readonly string[]): HostView {
  const table = new Map<string, { real: string; kind: "dir" | "file" | "other" }>();
  for (const entry of entries) {
    const [path, real] = entry.split(" -> ") as [string, string | undefined];
    const kind = path.endsWith("/") ? "dir" : "file";
    const clean = path.replace(/\/$/, "");
    table.set(clean, { real: (real ?? clean).replace(/\/$/, ""), kind });
  }
  return { resolve: (path) => table.get(path.replace(/\/+$/, "")) ?? null };
}
const USERNS = { kind: "userns", uid: 65534, gid: 65534 } as const;

test("bwrapArgv: no capabilities (user namespace, nobody inside), read-only root, private /tmp and HOME, socket places and hidden folders covered, then the workspace and read-only binds, then the namespaces and env", () => {
  const host = fakeHost(["/run/", "/var/run/ -> /run/", "/home/ci/", "/runs/r/", "/etc/resolv.conf"]);
  const argv = bwrapArgv({
    workspace: "/runs/r/tasks/s/a/default/1/workspace", network: false, hiddenPaths: ["/runs/r"], readOnlyBinds: ["/runs/r/tasks/s/a/answer.txt"], isolation: USERNS,
    env: { PATH: "/usr/bin:/bin", HOME: "/home/ci", TMPDIR: "/var/folders/x" }, cwd: "/runs/r/tasks/s/a/default/1/workspace/sub",
  }, ["bash", "-c", "echo hi"], host);
  assert.deepEqual(argv, [
    "bwrap", "--unshare-user", "--disable-userns", "--uid", "65534", "--gid", "65534",
    "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
    "--tmpfs", "/run", "--tmpfs", "/home/ci", "--tmpfs", "/runs/r",
    "--bind", "/runs/r/tasks/s/a/default/1/workspace", "/runs/r/tasks/s/a/default/1/workspace",
    "--ro-bind-try", "/runs/r/tasks/s/a/answer.txt", "/runs/r/tasks/s/a/answer.txt",
    "--chdir", "/runs/r/tasks/s/a/default/1/workspace/sub",
    "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net", "--die-with-parent", "--new-session", "--clearenv",
    "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/home/ci", "--setenv", "TMPDIR", "/tmp",
    "--", "bash", "-c", "echo hi",
  ]);
});

test("bwrapArgv: the network is shared when allowed; cap-drop where no user namespace can be made; without an existing HOME the private one is a folder of /tmp", () => {
  const argv = bwrapArgv({ bwrap: "/opt/bin/bwrap", workspace: "/w", network: true, env: { HOME: "/nonexistent" }, isolation: { kind: "cap-drop" } }, ["true"], fakeHost(["/w/"]));
  assert.deepEqual(argv, [
    "/opt/bin/bwrap", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", FALLBACK_SANDBOX_HOME,
    "--bind", "/w", "/w", "--chdir", "/w", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv",
    "--setenv", "HOME", FALLBACK_SANDBOX_HOME, "--", "true",
  ]);
  const host = fakeHost(["/root/", "/tmp/h/", "/etc/passwd"]);
  assert.deepEqual(["/root", "/root/", "/", "relative", "/tmp", "/tmp/h", "/missing", "/etc/passwd", undefined].map((HOME) => sandboxHome(HOME === undefined ? {} : { HOME }, host)),
    ["/root", "/root", FALLBACK_SANDBOX_HOME, FALLBACK_SANDBOX_HOME, FALLBACK_SANDBOX_HOME, "/tmp/h", FALLBACK_SANDBOX_HOME, FALLBACK_SANDBOX_HOME, FALLBACK_SANDBOX_HOME]);
  // A HOME inside /tmp (private, empty inside) is made there.
  assert.deepEqual(bwrapArgv({ workspace: "/w", network: true, env: { HOME: "/tmp/h" }, isolation: USERNS }, ["true"], host).slice(14, 18), ["--tmpfs", "/tmp", "--dir", "/tmp/h"]);
  assert.throws(() => bwrapArgv({ workspace: "/w", network: true, env: {} }, []), /the command is empty/);
  assert.deepEqual([sandboxIdentity(0, 0), sandboxIdentity(1000, 1001), sandboxIdentity(65534, 65534)], [{ uid: 65534, gid: 65534 }, { uid: 1000, gid: 1001 }, { uid: 65534, gid: 65534 }]);
});

test("bwrapArgv: each socket place by its real path, once; rhema's own HOME and XDG_RUNTIME_DIR too; resolv.conf's real path bound back; credential files covered", () => {
  const host = fakeHost([
    "/run/", "/var/run/", "/var/home/u/", "/home/u/ -> /var/home/u/", "/run/user/1000/", "/var/xdg/", "/etc/resolv.conf -> /run/systemd/resolve/stub-resolv.conf",
    "/secrets/gcp.json", "/secrets/aws/", "/home/u/.aws/credentials -> /var/home/u/.aws/credentials", "/w/", "/w/inside.json",
  ]);
  const argv = bwrapArgv({
    workspace: "/w", network: false, isolation: USERNS, hiddenPaths: ["/var/home/u/runs"],
    env: { HOME: "/home/u", XDG_RUNTIME_DIR: "/run/user/1000", GOOGLE_APPLICATION_CREDENTIALS: "/w/inside.json" },
    hostEnv: {
      HOME: "/home/u", XDG_RUNTIME_DIR: "/var/xdg", GOOGLE_APPLICATION_CREDENTIALS: "/secrets/gcp.json", AWS_SHARED_CREDENTIALS_FILE: "/home/u/.aws/credentials",
      AWS_WEB_IDENTITY_TOKEN_FILE: "/secrets/aws", OTHER: "/secrets/not-a-credential-variable",
    },
  }, ["true"], host);
  const mounts = argv.slice(argv.indexOf("/dev") + 1, argv.indexOf("--chdir"));
  assert.deepEqual(mounts, [
    "--tmpfs", "/tmp", "--tmpfs", "/run", "--tmpfs", "/var/run", "--tmpfs", "/var/xdg", "--tmpfs", "/var/home/u",
    "--ro-bind", "/run/systemd/resolve/stub-resolv.conf", "/run/systemd/resolve/stub-resolv.conf",
    "--bind", "/w", "/w",
    "--ro-bind", "/dev/null", "/w/inside.json", "--ro-bind", "/dev/null", "/secrets/gcp.json", "--tmpfs", "/secrets/aws",
  ]);
  // A credential folder that holds the workspace is not covered (the workspace would go with it); missing ones are skipped.
  const around = bwrapArgv({ workspace: "/w", network: false, isolation: USERNS, env: { AWS_SHARED_CREDENTIALS_FILE: "/", GOOGLE_APPLICATION_CREDENTIALS: "/missing" }, hostEnv: { AWS_WEB_IDENTITY_TOKEN_FILE: "/w" } }, ["true"], host);
  assert.equal(around.includes("/dev/null"), false, around.join(" "));
  assert.deepEqual(around.filter((a) => a === "--tmpfs").length, 3, around.join(" ")); // /tmp, /run, /var/run
});

test("sandboxed: writes to /tmp and $HOME stay inside, a workspace write lands, the rest is read-only", { skip }, async (t) => {
  const home = await hostDir(t, "rhema-home-");
  const tmpWorkspace = await tempDir(t); // under /tmp, which the sandbox covers with its own: bound back on top
  const marker = `rhema-sbx-marker-${process.pid}-${Date.now()}`;
  const tool = shellTool({ env: { PATH: DEFAULT_PATH, HOME: home }, sandbox: { network: false } });
  const command = `echo t > /tmp/${marker}; echo h > "$HOME/${marker}"; echo w > in-workspace; echo "home=$HOME"; ` +
    `touch /var/tmp/${marker} 2>&1 | sed 's/.*: //'; cat in-workspace`;
  assert.equal(textOf(await callTool(tool, { command }, toolContext(tmpWorkspace))), `home=${home}\nRead-only file system\nw\n[exit code 0]`);
  assert.equal(await readFile(join(tmpWorkspace, "in-workspace"), "utf8"), "w\n");
  assert.equal(existsSync(`/tmp/${marker}`), false, "/tmp write reached the host");
  assert.equal(existsSync(join(home, marker)), false, "$HOME write reached the host");
  assert.equal(existsSync(`/var/tmp/${marker}`), false);
  // The same command unsandboxed does reach the host: the test can tell.
  const plain = shellTool({ env: { PATH: DEFAULT_PATH, HOME: home } });
  await callTool(plain, { command: `echo h > "$HOME/${marker}"` }, toolContext(tmpWorkspace));
  assert.equal(existsSync(join(home, marker)), true);
});

test("sandboxed: /proc/1/environ and /proc/$PPID/environ show nothing of the caller's environment", { skip }, async (t) => {
  const ws = await hostDir(t);
  const secret = `sk-caller-${Date.now()}`;
  const command = 'echo "ppid=$PPID"; cat /proc/1/environ /proc/$PPID/environ 2>/dev/null | tr "\\0" "\\n" | grep -c rhema-caller-secret; echo "own=$RHEMA_OWN"';
  const callerEnv = { PATH: process.env.PATH ?? DEFAULT_PATH, RHEMA_CALLER_SECRET: `rhema-caller-secret-${secret}` };
  const env = { PATH: DEFAULT_PATH, RHEMA_OWN: "rhema-caller-secret-passed-on-purpose" };
  const inside = await runDriver({ workspace: ws, command, env, sandbox: { network: false } }, callerEnv);
  assert.equal(inside.result.content, "ppid=1\n0\nown=rhema-caller-secret-passed-on-purpose\n[exit code 0]");
  // Unsandboxed, the parent's environ is the caller's: the check finds it there.
  const outside = await runDriver({ workspace: ws, command, env }, callerEnv);
  assert.match(outside.result.content, /^ppid=\d+\n1\nown=/);
});

test("sandboxed: 127.0.0.1 is a loopback of its own without network, the host's with it", { skip }, async (t) => {
  const ws = await hostDir(t);
  const server = createServer((socket) => socket.end("hello from the host\n"));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const command = `head -1 2>/dev/null </dev/tcp/127.0.0.1/${port} || echo refused`;
  const env = { PATH: DEFAULT_PATH };
  const closed = shellTool({ env, sandbox: { network: false } });
  assert.equal(textOf(await callTool(closed, { command }, toolContext(ws))), "refused\n[exit code 0]");
  const open = shellTool({ env, sandbox: { network: true } });
  assert.equal(textOf(await callTool(open, { command }, toolContext(ws))), "hello from the host\n[exit code 0]");
});

test("sandboxed: a task sees neither a sibling's session.json nor its own, only its workspace and its read-only binds", { skip }, async (t) => {
  const root = await hostDir(t);
  const { run, workspaceA, sessionA, sessionB } = await runDirWithTwoTasks(root);
  const answer = join(run, "tasks", "suite", "a", "answer.txt");
  await writeFile(answer, "42\n");
  const tool = shellTool({ env: { PATH: DEFAULT_PATH }, sandbox: { network: false, hiddenPaths: [run], readOnlyBinds: [answer, join(run, "missing")] } });
  const command = `cat ${sessionB} 2>&1; cat ../session.json 2>&1; ls ${run} ${run}/tasks/suite; cat ${answer}; echo 7 > ${answer}; touch made`;
  assert.equal(textOf(await callTool(tool, { command }, toolContext(workspaceA))), [
    `cat: ${sessionB}: No such file or directory`, "cat: ../session.json: No such file or directory",
    `${run}:`, "tasks", "", `${run}/tasks/suite:`, "a", "42", `bash: line 1: ${answer}: Read-only file system`, "[exit code 0]",
  ].join("\n"));
  assert.equal(await readFile(answer, "utf8"), "42\n");
  assert.equal(existsSync(join(workspaceA, "made")), true);
  assert.equal((await readFile(sessionA, "utf8")).includes("session of a"), true);
  // Unsandboxed the sibling's session is readable: the test can tell.
  const plain = shellTool({ env: { PATH: DEFAULT_PATH } });
  assert.match(textOf(await callTool(plain, { command: `cat ${sessionB}` }, toolContext(workspaceA))), /session of b/);
});

test("sandboxed: a timeout or a cancel kills the whole tree inside; exit codes come through", { skip }, async (t) => {
  const ws = await hostDir(t);
  const mark = `rhema-sbx-kill-${process.pid}`;
  const tool = shellTool({ env: { PATH: DEFAULT_PATH, RHEMA_MARK: mark }, sandbox: { network: false } });
  const started = Date.now();
  const timedOut = await callTool(tool, { command: "sleep 1000 & setsid sleep 1000 & sleep 1000", timeoutMs: 500 }, toolContext(ws));
  assert.equal(timedOut.content, "(no output)\n[timed out after 500 ms; the command and its child processes were killed]");
  assert.ok(Date.now() - started < 5000);
  assert.deepEqual(await processesMarked(mark), []);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  await assert.rejects(tool.run({ command: "sleep 1000 & sleep 1000" }, toolContext(ws, { signal: controller.signal })), CancelledError);
  assert.deepEqual(await processesMarked(mark), []);
  assert.deepEqual(await callTool(tool, { command: "echo out; exit 3" }, toolContext(ws)), { content: "out\n[exit code 3]", isError: true });
  // bwrap reports a signal death as 128 + the signal's number.
  assert.deepEqual(await callTool(tool, { command: "kill -9 $$" }, toolContext(ws)), { content: "(no output)\n[exit code 137]", isError: true });
});

test("the shell tool's spec is the same with or without the sandbox (it sits in the cached prefix; the environment report names the sandbox)", () => {
  const plain = shellTool().spec;
  assert.deepEqual(shellTool({ sandbox: { network: true } }).spec, plain);
  assert.deepEqual(shellTool({ sandbox: { network: false } }).spec, plain);
  assert.doesNotMatch(plain.description, /sandbox/);
});

test("sandboxed: onStarted sees bwrap's group, held, before the command runs; a throwing onStarted runs nothing", { skip }, async (t) => {
  const ws = await hostDir(t);
  const tool = shellTool({ env: { PATH: DEFAULT_PATH }, sandbox: { network: false } });
  const seen: string[] = [];
  const onStarted = async (info: { pgid: number; startTime: number }): Promise<void> => {
    await new Promise((r) => setTimeout(r, 200));
    const stat = await readFile(`/proc/${info.pgid}/stat`, "utf8");
    const program = (await readFile(`/proc/${info.pgid}/cmdline`, "utf8")).split("\0")[0];
    seen.push(`${program} start=${Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]) === info.startTime} ran=${existsSync(join(ws, "ran"))}`);
  };
  assert.equal(textOf(await callTool(tool, { command: "touch ran" }, toolContext(ws, { onStarted }))), "(no output)\n[exit code 0]");
  assert.deepEqual(seen, ["bwrap start=true ran=false"]);
  assert.equal(existsSync(join(ws, "ran")), true);
  const failure = new Error("no checkpoint");
  await assert.rejects(tool.run({ command: "touch ran-again" }, toolContext(ws, { onStarted: async () => { throw failure; } })), (e) => e === failure);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(existsSync(join(ws, "ran-again")), false);
});
