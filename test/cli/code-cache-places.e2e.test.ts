/**
 * The code cache in places it cannot live (src/cli/code-cache.ts, src/cli/rhema.ts): a file, a
 * folder under a file, a path under `/proc`, a FIFO, a device, a folder this user cannot
 * search, a FIFO or device where the cache file goes. None of them changes a run's exit code or
 * output, prints a stack trace, or makes the run wait: the cache is simply not there.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { chmod, cp, lstat, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { codeCacheFile } from "../../src/cli/code-cache.js";
import { cliEnv, startCli, type CliResult } from "../support/cli.js";
import { compiled } from "../support/paths.js";
import { OPEN_POLICY, shellStepsTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

/** Long enough for a run under load; a cache that hangs the run never finishes it. */
const RUN_LIMIT_MS = 60_000;

/** The CLI's result, or a failure naming the hang (the process killed) when it ran past `RUN_LIMIT_MS`. */
async function bounded(started: { child: import("node:child_process").ChildProcess; done: Promise<CliResult> }): Promise<CliResult> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<"hung">((resolve) => (timer = setTimeout(() => resolve("hung"), RUN_LIMIT_MS)));
  const result = await Promise.race([started.done, limit]);
  clearTimeout(timer);
  if (result === "hung") {
    started.child.kill("SIGKILL");
    assert.fail(`the run did not end within ${RUN_LIMIT_MS} ms`);
  }
  return result;
}

/** A run of a one-task shell suite in `root` with the cache at `cache`; its output with `root` spelled ROOT. */
async function runWithCache(root: string, cache: string): Promise<CliResult> {
  const result = await bounded(startCli(["run", "suite", "--out", "out", "--sandbox", "off"], { cwd: root, env: cliEnv({ RHEMA_COMPILE_CACHE: cache }) }));
  const plain = (text: string) => text.replaceAll(root, "ROOT").replace(/\d\d:\d\d:\d\d/g, "HH:MM:SS").replace(/run [0-9a-f]{8}\b/g, "run ID").replace(/\d+(\.\d+)?m?s\b/g, "T");
  return { ...result, stdout: plain(result.stdout), stderr: plain(result.stderr) };
}

async function suiteIn(root: string): Promise<void> {
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/echo.yaml": shellStepsTask(["echo hi"], { rest: "checks:\n  - { name: ok, run: \"true\" }\n" }),
  });
}

function assertNoStack(result: CliResult): void {
  assert.doesNotMatch(result.stderr, /\n\s+at |Error: |ENOTDIR|EACCES|node:internal/, `no stack trace or raw errno:\n${result.stderr}`);
}

const ROOT = process.getuid?.() === 0;

test("a cache folder that cannot be one — a file, a folder under a file, under /proc, a FIFO, a device — leaves a run's exit code and output as they are, in bounded time", async (t) => {
  const base = await tempDir(t);
  const places: Record<string, (root: string) => Promise<string>> = {
    "a file": async (root) => {
      await writeFile(join(root, "a-file"), "x");
      return join(root, "a-file");
    },
    "a folder under a file": async (root) => {
      await writeFile(join(root, "a-file"), "x");
      return join(root, "a-file", "cache");
    },
    "a missing folder under /proc/self": async () => "/proc/self/rhema-cache-test/deeper",
    "/proc/1": async () => "/proc/1",
    "a missing folder under /proc/1": async () => "/proc/1/rhema-cache-test",
    "a FIFO": async (root) => {
      execFileSync("mkfifo", [join(root, "fifo")]);
      return join(root, "fifo");
    },
    // Only root may make a device node (CAP_MKNOD); as another user the FIFO stands for special files.
    ...(ROOT ? {
      "a character device (mknod, in a temp folder)": async (root: string) => {
        execFileSync("mknod", [join(root, "null-device"), "c", "1", "3"]);
        return join(root, "null-device");
      },
    } : {}),
  };
  const baselineRoot = join(base, "baseline");
  await mkdir(baselineRoot);
  await suiteIn(baselineRoot);
  const baseline = await runWithCache(baselineRoot, "off");
  assert.equal(baseline.code, 0, baseline.stderr);
  for (const [name, make] of Object.entries(places)) {
    await t.test(name, async () => {
      const root = join(base, name.replace(/\W+/g, "-"));
      await mkdir(root);
      await suiteIn(root);
      const cache = await make(root);
      const run = await runWithCache(root, cache);
      assert.equal(run.code, baseline.code, `${name}: ${run.stderr}`);
      assertNoStack(run);
      assert.equal(run.stdout, baseline.stdout, name);
      assert.equal(run.stderr, baseline.stderr, name);
    });
  }
});

test("a FIFO or a device where the cache file goes is neither waited on nor replaced", async (t) => {
  const root = await tempDir(t);
  await suiteIn(root);
  const kinds: [string, (p: string) => unknown][] = [["FIFO", (p) => execFileSync("mkfifo", [p])]];
  // Only root may make a device node (CAP_MKNOD).
  if (ROOT) kinds.push(["device", (p) => execFileSync("mknod", [p, "c", "1", "3"])]);
  for (const [kind, make] of kinds) {
    const cache = join(root, `cache-${kind}`);
    await mkdir(cache, { mode: 0o700 });
    // The file `--version` reads and writes: named by the bundle's bytes and the command.
    const file = codeCacheFile(cache, await readFile(compiled("bundle/rhema.cjs")), "");
    make(file);
    const run = await bounded(startCli(["--version"], { cwd: root, env: cliEnv({ RHEMA_COMPILE_CACHE: cache }) }));
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^\d+\.\d+\.\d+/);
    assertNoStack(run);
    const left = await lstat(file);
    assert.ok(kind === "FIFO" ? left.isFIFO() : left.isCharacterDevice(), `the ${kind} is still there`);
  }
});

/**
 * A temp folder every user can reach (each folder above it searchable by others): the system temp
 * folder, else /var/tmp or /dev/shm (a test elsewhere may leave /tmp 0700 for a moment).
 */
async function sharedTempDir(t: { after(fn: () => unknown): void }): Promise<string> {
  const reachable = async (dir: string): Promise<boolean> => {
    for (let d = dir; ; d = dirname(d)) {
      const mode = await stat(d).then((s) => s.mode, () => 0);
      if ((mode & 0o001) === 0) return false;
      if (dirname(d) === d) return true;
    }
  };
  for (const base of [tmpdir(), "/var/tmp", "/dev/shm"]) {
    if (!(await reachable(base))) continue;
    const dir = await mkdtemp(join(base, "rhema-test-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await chmod(dir, 0o755);
    return dir;
  }
  throw new Error("no temp folder every user can reach");
}

test("a cache folder the user cannot search (as nobody: chmod 000, itself or its parent) leaves the command's exit code and output as they are", async (t) => {
  // A machine whose / others cannot search (something left it 0700) runs nothing as nobody at all.
  if (((await stat("/")).mode & 0o001) === 0) return t.skip("/ is not searchable by other users on this machine (mode 700): no unprivileged user can run anything");
  const root = await sharedTempDir(t);
  // The executable and its bundle in a folder nobody can read (the checkout may not be).
  const app = join(root, "app");
  // The executable's own modules (what it loads before the bundle), and the bundle.
  for (const module of ["src/cli/rhema.js", "src/cli/code-cache.js", "src/cli/user-namespace-entry.js", "src/process/search-path.js", "src/process/user-namespace.js"]) {
    await cp(compiled(module), join(app, "dist", module));
  }
  await cp(compiled("bundle"), join(app, "dist/bundle"), { recursive: true });
  execFileSync("chmod", ["-R", "a+rX", app]);
  const home = join(root, "home");
  await mkdir(join(home, "locked", "cache"), { recursive: true });
  await mkdir(join(home, "closed"), { recursive: true });
  // As root the command runs as nobody, who owns the folders (root would search them whatever their mode); as another user, as that user.
  if (ROOT) execFileSync("chown", ["-R", "65534:65534", home]);
  await chmod(join(home, "locked"), 0o000);
  await chmod(join(home, "closed"), 0o000);
  const command = [process.execPath, join(app, "dist/src/cli/rhema.js"), "--version"];
  const asNobody = (cache: string) => bounded({
    ...(() => {
      const child = spawn(ROOT ? "setpriv" : command[0]!, ROOT ? ["--reuid=65534", "--regid=65534", "--clear-groups", ...command] : command.slice(1), {
        cwd: root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", RHEMA_COMPILE_CACHE: cache }, stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      return { child, done: new Promise<CliResult>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))) };
    })(),
  });
  try {
    const baseline = await asNobody("off");
    assert.equal(baseline.code, 0, baseline.stderr);
    for (const cache of [join(home, "locked", "cache"), join(home, "closed"), join(home, "closed", "inner")]) {
      const run = await asNobody(cache);
      assert.equal(run.code, 0, `${cache}: ${run.stderr}`);
      assertNoStack(run);
      assert.equal(run.stdout, baseline.stdout);
      assert.equal(run.stderr, baseline.stderr);
    }
  } finally {
    // Searchable again, so the temp folder's removal (a user who is not root) can enter them.
    await Promise.all([chmod(join(home, "locked"), 0o700), chmod(join(home, "closed"), 0o700)]).catch(() => {});
  }
});
