/**
 * The sandbox tried from inside as an attacker would, as root (CI's user, GitHub `container:`
 * jobs) and as nobody (`setpriv`, HOME unset, rhema's files copied to a 0755 folder): each
 * attempt — keep a capability, make a user namespace that has them, unmount the tmpfs over the
 * run directory, unmount /proc and read rhema's environ, remount / read-write, uncover the run
 * directory from a nested namespace, connect to a host socket in /run, $XDG_RUNTIME_DIR, $HOME,
 * read a credential file — is run in the old sandbox (`legacyBwrapArgv`, where as root each gets
 * out) and in today's (where none does). A socket in a folder no one hides, and
 * /etc/resolv.conf, stay reachable in both: the test's client works. Abstract sockets follow the
 * network namespace.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, chown, cp, lstat, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join, posix } from "node:path";
import { test } from "node:test";
import { compiled } from "../support/paths.js";
import { sandboxSkip } from "./sandbox-fixture.js";

const skip = await sandboxSkip();
const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

interface Scene {
  root: string;
  runDir: string;
  workspace: string;
  driver: string;
  env: Record<string, string>;
  tag: string;
  sockets: Record<"run" | "tmp" | "xdg" | "home" | "visible", string>;
  abstract: string;
}

/** A unix socket server at `path` (0777, so nobody may connect) answering "hello"; closed after the test. */
async function listen(t: { after(fn: () => unknown): void }, path: string): Promise<void> {
  const server = createServer((socket) => socket.end("hello\n"));
  await new Promise<void>((r) => server.listen(path, r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  if (!path.startsWith("\0")) await chmod(path, 0o777);
}

/** `entries` (paths under dist/) and every compiled module they import, relatively, at any depth. */
async function importClosure(entries: string[]): Promise<string[]> {
  const found = new Set<string>();
  const visit = async (file: string): Promise<void> => {
    if (found.has(file)) return;
    found.add(file);
    const text = await readFile(compiled(file), "utf8");
    for (const [, spec] of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) await visit(posix.normalize(posix.join(posix.dirname(file), spec!)));
  };
  for (const entry of entries) await visit(entry);
  return [...found];
}

/** A folder made for the test (0755, owned by `owner`), removed after it. */
async function folder(t: { after(fn: () => unknown): void }, path: string, owner: number): Promise<string> {
  await mkdir(path, { recursive: true, mode: 0o755 });
  await chmod(path, 0o755);
  await chown(path, owner, owner);
  t.after(() => rm(path, { recursive: true, force: true }));
  return path;
}

/** rhema's stand-in and what it needs, copied to a 0755 folder anyone can read; a run directory, a workspace, sockets, a credential file. */
async function scene(t: { after(fn: () => unknown): void }, owner: number): Promise<Scene> {
  const tag = randomBytes(6).toString("hex");
  const root = await folder(t, await realpath(await mkdtemp("/var/tmp/rhema-esc-")), 0);
  const bundle = await folder(t, join(root, "bundle"), 0);
  for (const file of await importClosure(["test/process/escape-driver.js"])) {
    await mkdir(join(bundle, file, ".."), { recursive: true, mode: 0o755 });
    await cp(compiled(file), join(bundle, file));
  }
  await writeFile(join(bundle, "package.json"), '{ "type": "module" }\n');
  const runDir = join(root, "run");
  await mkdir(join(runDir, "tasks", "other"), { recursive: true, mode: 0o755 });
  await writeFile(join(runDir, "tasks", "other", "session.json"), `{"checkpoint":"checkpoint-secret-${tag}"}\n`, { mode: 0o644 });
  const workspace = await folder(t, join(root, "workspace"), owner);
  await folder(t, join(root, "outside"), owner);
  await writeFile(join(root, "credentials.json"), `{"private_key":"credential-secret-${tag}"}\n`, { mode: 0o644 });
  const sockets = {
    run: join(await folder(t, `/run/rhema-esc-${tag}`, 0), "s.sock"),
    tmp: join(await folder(t, `/tmp/rhema-esc-${tag}`, 0), "s.sock"),
    xdg: join(await folder(t, join(root, "xdg"), owner), "s.sock"),
    home: join(await folder(t, join(root, "home"), owner), "s.sock"),
    visible: join(await folder(t, join(root, "visible"), 0), "s.sock"),
  };
  for (const path of Object.values(sockets)) await listen(t, path);
  const abstract = `\0rhema-esc-${tag}`;
  await listen(t, abstract);
  const env: Record<string, string> = {
    PATH: "/usr/local/bin:/usr/bin:/bin", RHEMA_ESCAPE_SECRET: `environ-secret-${tag}`,
    XDG_RUNTIME_DIR: join(root, "xdg"), GOOGLE_APPLICATION_CREDENTIALS: join(root, "credentials.json"),
  };
  return { root, runDir, workspace, driver: join(bundle, "test/process/escape-driver.js"), env, tag, sockets, abstract };
}

/** Each attempt: a bash script that exits 0 when it got out. */
function attempts(s: Scene): Array<{ name: string; script: string }> {
  // node's client, as the server's, takes "\0name" for the abstract socket "name"; "@name" on the command line.
  const client = 'const p = process.argv[1].replace(/^@/, "\\0"); require("net").connect(p).on("data", (d) => { process.stdout.write(d); process.exit(0); }).on("error", () => process.exit(1));';
  const connect = (path: string) => `${process.execPath} -e '${client}' ${JSON.stringify(path.replace(/^\0/, "@"))} | grep -q hello`;
  const secret = join(s.runDir, "tasks", "other", "session.json");
  const uncover = `umount -l ${s.runDir} && cat ${secret}`;
  return [
    { name: "keeps a capability", script: `grep -q '^CapEff:.*[1-9a-f]' /proc/self/status` },
    { name: "a nested user namespace has capabilities", script: `unshare -Ur grep -q '^CapEff:.*[1-9a-f]' /proc/self/status` },
    { name: "umount -l the run directory's tmpfs", script: `umount -l ${s.runDir}; grep -q checkpoint-secret ${secret}` },
    { name: "umount -l /proc, read rhema's environ", script: `umount -l /proc && tr '\\0' '\\n' < /proc/$VICTIM_PID/environ | grep -q '^RHEMA_ESCAPE_SECRET=environ-secret'` },
    { name: "remount / read-write, write outside", script: `mount -o remount,bind,rw / && echo out > ${s.root}/outside/escaped` },
    { name: "a nested namespace uncovers the run directory", script: `{ unshare -m sh -c '${uncover}' || unshare -Urm sh -c '${uncover}'; } 2>/dev/null | grep -q checkpoint-secret` },
    { name: "socket in /run", script: connect(s.sockets.run) },
    { name: "socket in $XDG_RUNTIME_DIR", script: connect(s.sockets.xdg) },
    { name: "socket in /tmp", script: connect(s.sockets.tmp) },
    // rhema's HOME (root's run) is the folder holding it; nobody's run has none, and its HOME inside is the private fallback.
    { name: "socket in $HOME", script: `[ "$HOME" = ${join(s.root, "home")} ] && ${connect(s.sockets.home)}` },
    { name: "abstract socket", script: connect(s.abstract) },
    { name: "credential file", script: `grep -q credential-secret ${s.env.GOOGLE_APPLICATION_CREDENTIALS}` },
    // Not escapes: what must keep working.
    { name: "socket in a visible folder", script: connect(s.sockets.visible) },
    { name: "reads /etc/resolv.conf", script: "cat /etc/resolv.conf" },
    { name: "writes the workspace", script: "mkdir -p made/deep && echo made > made/deep/file && chmod 0500 made/deep" },
  ];
}

interface DriverOutput { probe: { ok: boolean; isolation?: unknown; reason?: string }; results?: Record<string, { code: number | null; out: string }> }

/** Runs the stand-in as `user` (root, or nobody through setpriv with HOME unset) in `form`'s sandbox; `wrap` (an argv) runs it inside another program. */
function runDriver(
  s: Scene, user: "root" | "nobody", form: "legacy" | "current", opts: { network?: boolean; attempts?: Array<{ name: string; script: string }>; wrap?: string[] } = {},
): Promise<DriverOutput> {
  const request = JSON.stringify({ form, workspace: s.workspace, runDir: s.runDir, network: opts.network ?? false, attempts: opts.attempts ?? attempts(s) });
  const [program, args, env] = user === "root"
    ? [process.execPath, [s.driver, request], { ...s.env, HOME: join(s.root, "home") }]
    : ["setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "--", process.execPath, s.driver, request], s.env];
  if (opts.wrap) {
    args.unshift(program);
    return runProgram(opts.wrap[0]!, [...opts.wrap.slice(1), ...args], env, `${user}, ${form}`);
  }
  return runProgram(program, args, env, `${user}, ${form}`);
}

/** Runs the stand-in from `/`; its one JSON line. */
function runProgram(program: string, args: string[], env: Record<string, string>, label: string): Promise<DriverOutput> {
  return new Promise((resolveRun, reject) => {
    execFile(program, args, { env, cwd: "/", encoding: "utf8", timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`driver (${label}) failed: ${err.message}\n${stdout}${stderr}`));
      else resolveRun(JSON.parse(stdout.trim()) as DriverOutput);
    });
  });
}

const escaped = (out: DriverOutput): Record<string, boolean> =>
  Object.fromEntries(Object.entries(out.results!).map(([name, r]) => [name, r.code === 0]));

/** The attempts that are escapes: each must fail in today's sandbox. */
const ESCAPES = [
  "keeps a capability", "a nested user namespace has capabilities", "umount -l the run directory's tmpfs", "umount -l /proc, read rhema's environ",
  "remount / read-write, write outside", "a nested namespace uncovers the run directory", "socket in /run", "socket in $XDG_RUNTIME_DIR",
  "socket in /tmp", "socket in $HOME", "abstract socket", "credential file",
];
const KEEPS_WORKING = ["socket in a visible folder", "reads /etc/resolv.conf", "writes the workspace"];

async function checkCurrent(s: Scene, user: "root" | "nobody", ownerUid: number): Promise<void> {
  const current = await runDriver(s, user, "current");
  assert.equal(current.probe.ok, true, JSON.stringify(current.probe));
  assert.deepEqual(current.probe.isolation, { kind: "userns", uid: NOBODY, gid: NOBODY }, "nobody inside, whether rhema is root or nobody");
  const got = escaped(current);
  assert.deepEqual(Object.fromEntries(ESCAPES.map((name) => [name, got[name]])), Object.fromEntries(ESCAPES.map((name) => [name, false])),
    JSON.stringify(current.results, null, 1));
  assert.deepEqual(KEEPS_WORKING.map((name) => got[name]), KEEPS_WORKING.map(() => true), JSON.stringify(current.results, null, 1));
  assert.equal(current.results!["reads /etc/resolv.conf"]!.out, (await readFile("/etc/resolv.conf", "utf8")).trim());
  // What the command made in the workspace belongs to rhema's uid outside, and rhema can remove it.
  for (const path of ["made", "made/deep", "made/deep/file"]) assert.equal((await lstat(join(s.workspace, path))).uid, ownerUid, path);
  await assert.rejects(lstat(join(s.root, "outside", "escaped")));
  // With the network allowed, abstract sockets (they belong to the network namespace) are reachable; socket files still are not.
  const networked = escaped(await runDriver(s, user, "current", { network: true }));
  assert.deepEqual([networked["abstract socket"], networked["socket in /run"], networked["keeps a capability"]], [true, false, false]);
}

test("as root: every escape gets out of the old sandbox and none out of today's", { skip: skip || (!isRoot && "needs root") }, async (t) => {
  const s = await scene(t, 0);
  const legacy = escaped(await runDriver(s, "root", "legacy"));
  assert.deepEqual(legacy, {
    ...Object.fromEntries(ESCAPES.map((name) => [name, true])),
    "socket in /tmp": false, "socket in $HOME": false, "abstract socket": false, // already private there: /tmp, $HOME and the network namespace
    ...Object.fromEntries(KEEPS_WORKING.map((name) => [name, true])),
  });
  assert.equal(await readFile(join(s.root, "outside", "escaped"), "utf8"), "out\n", "the old sandbox wrote outside the workspace");
  await rm(join(s.root, "outside", "escaped"));
  await rm(join(s.workspace, "made"), { recursive: true });
  await checkCurrent(s, "root", 0);
});

test("as nobody (setpriv, HOME unset): the sockets and the credential file the old sandbox left open are closed", { skip: skip || (!isRoot && "needs root to switch to nobody") }, async (t) => {
  const s = await scene(t, NOBODY);
  const legacy = escaped(await runDriver(s, "nobody", "legacy"));
  assert.deepEqual(legacy, {
    // Unprivileged, bwrap made a user namespace anyway: no capability, the mounts locked — but a nested one could still be made.
    ...Object.fromEntries(ESCAPES.map((name) => [name, false])),
    "a nested user namespace has capabilities": true, "socket in /run": true, "socket in $XDG_RUNTIME_DIR": true, "credential file": true,
    ...Object.fromEntries(KEEPS_WORKING.map((name) => [name, true])),
  });
  await rm(join(s.workspace, "made"), { recursive: true });
  await checkCurrent(s, "nobody", NOBODY);
});

test("where /etc/resolv.conf links into /run (Ubuntu), it stays readable inside while the rest of /run is hidden", { skip: skip || (!isRoot && "needs root for a mount namespace") }, async (t) => {
  const s = await scene(t, 0);
  // In a mount namespace of the test's own: a fresh /run holding the resolver's file and a socket, and an /etc whose resolv.conf links there.
  const etc = join(s.root, "etc");
  const setup = [
    "mount -t tmpfs tmpfs /run", "mkdir -p /run/systemd/resolve", `echo 'nameserver 192.0.2.53 # ${s.tag}' > /run/systemd/resolve/stub-resolv.conf`,
    `cp -a /etc ${etc}`, `rm ${etc}/resolv.conf`, `ln -s ../run/systemd/resolve/stub-resolv.conf ${etc}/resolv.conf`, `mount --bind ${etc} /etc`,
    `touch /run/systemd/resolve/io.systemd.Resolve`, 'exec "$@"',
  ].join(" && ");
  const wrap = ["unshare", "-m", "--propagation", "private", "--", "sh", "-c", setup, "in-namespace"];
  const tries = [
    { name: "reads /etc/resolv.conf", script: "cat /etc/resolv.conf" },
    { name: "sees the rest of /run", script: "ls /run/systemd/resolve/io.systemd.Resolve" },
  ];
  const current = await runDriver(s, "root", "current", { attempts: tries, wrap });
  assert.deepEqual(current.results, {
    "reads /etc/resolv.conf": { code: 0, out: `nameserver 192.0.2.53 # ${s.tag}` },
    "sees the rest of /run": { code: 2, out: "ls: cannot access '/run/systemd/resolve/io.systemd.Resolve': No such file or directory" },
  });
  // The old sandbox hid nothing of /run: the same file is there.
  assert.equal((await runDriver(s, "root", "legacy", { attempts: tries, wrap })).results!["sees the rest of /run"]!.code, 0);
});
