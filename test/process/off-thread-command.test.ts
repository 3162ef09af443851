/**
 * Commands run from the command thread (src/process/off-thread-command.ts): real processes,
 * their output whole or streamed, their stdin, exit codes, signals, timeouts and spawns that fail.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { errnoCode, machineLimitOf } from "../../src/core/errors.js";
import { OffThreadSpawnError, runOffThread } from "../../src/process/off-thread-command.js";
import { tempDir } from "../support/temp-dir.js";

test("a command's stdout comes back whole, its stdin is what was given, its environment and folder are the ones asked for", async (t) => {
  const dir = await tempDir(t);
  const ran = await runOffThread({ file: "sh", args: ["-c", 'cat; printf "%s|%s" "$WHO" "$(pwd)"'], cwd: dir, env: { WHO: "me", PATH: process.env.PATH ?? "/usr/bin:/bin" }, input: "in:" });
  assert.deepEqual({ ...ran, stdout: ran.stdout.toString() }, { code: 0, signal: null, stdout: `in:me|${dir}`, stderr: "", timedOut: false });
});

test("streamed stdout arrives in order, chunk by chunk, and the result holds none of it", async () => {
  const chunks: Buffer[] = [];
  // 300,000 lines: many pipe reads, so many messages from the thread.
  const ran = await runOffThread({ file: "seq", args: ["300000"], onStdout: (chunk) => chunks.push(chunk) });
  assert.equal(ran.code, 0);
  assert.equal(ran.stdout.length, 0);
  assert.ok(chunks.length > 1, `${chunks.length} chunk(s)`);
  const lines = Buffer.concat(chunks).toString().trimEnd().split("\n");
  assert.equal(lines.length, 300000);
  assert.ok(lines.every((line, i) => line === String(i + 1)), "in order, nothing lost");
});

test("an exit code, a signal and stderr (cut at the limit) come back as they are", async () => {
  const failed = await runOffThread({ file: "sh", args: ["-c", "printf 'x%.0s' $(seq 1 500) >&2; exit 3"], stderrChars: 100 });
  assert.deepEqual([failed.code, failed.signal, failed.stderr.length], [3, null, 100]);
  const killed = await runOffThread({ file: "sh", args: ["-c", "kill -KILL $$"] });
  assert.deepEqual([killed.code, killed.signal, killed.timedOut], [null, "SIGKILL", false]);
});

test("a command past its time limit is stopped and says so", async () => {
  const ran = await runOffThread({ file: "sleep", args: ["30"], timeoutMs: 200 });
  assert.deepEqual([ran.code, ran.signal, ran.timedOut], [null, "SIGTERM", true]);
});

test("a command that cannot start rejects with spawn's errno, so a missing program and a machine limit read as before", async (t) => {
  const dir = await tempDir(t);
  // A path, not a name: a search of PATH says EACCES instead where some folder on it is closed to the user.
  const missing = join(dir, "no-such-program");
  const err = await runOffThread({ file: missing, args: [] }).then(() => null, (e: unknown) => e);
  assert.ok(err instanceof OffThreadSpawnError);
  assert.equal(errnoCode(err), "ENOENT");
  assert.equal(err.syscall, `spawn ${missing}`);
  // An EMFILE there is the machine's limit, named with what was being done.
  const limit = machineLimitOf(new OffThreadSpawnError("spawn git EMFILE", "EMFILE", "git"));
  assert.match(limit!.message, /\(spawn git\): too many open files/);
  const notRunnable = join(dir, "plain.txt");
  await writeFile(notRunnable, "not a program");
  assert.equal(errnoCode(await runOffThread({ file: notRunnable, args: [] }).then(() => null, (e: unknown) => e)), "EACCES");
});

test("many commands at once each get their own result", async () => {
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => runOffThread({ file: "sh", args: ["-c", `echo ${i}; exit ${i % 3}`] })));
  assert.deepEqual(results.map((r) => [r.stdout.toString().trim(), r.code]), Array.from({ length: 40 }, (_, i) => [String(i), i % 3]));
});

test("a process whose only work is a command under way waits for it, and one with none exits (the thread holds nothing open)", (t) => {
  const module = fileURLToPath(new URL("../../src/process/off-thread-command.js", import.meta.url));
  const script = `import { runOffThread } from ${JSON.stringify(module)};
const ran = await runOffThread({ file: "sh", args: ["-c", "sleep 0.3; echo late"] });
process.stdout.write("got " + ran.stdout.toString());`;
  const waited = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 20_000 });
  assert.equal(waited.stdout, "got late\n", waited.stderr);
  // Once the command is done the thread is idle: the process ends at once, not at a timeout.
  const idle = spawnSync(process.execPath, ["--input-type=module", "-e", `${script}\nsetTimeout(() => {}, 0);`], { encoding: "utf8", timeout: 20_000 });
  assert.equal(idle.status, 0, idle.stderr);
  assert.equal(idle.signal, null, "ended by itself");
  t.diagnostic("both processes ended by themselves");
});

test("a command thread that cannot start for the open-file limit fails its command with EMFILE, the machine's limit, not an error of its own", () => {
  const module = fileURLToPath(new URL("../../src/process/off-thread-command.js", import.meta.url));
  // Every descriptor taken before the first command: the thread's start is what meets the limit.
  const script = `import { openSync } from "node:fs";
import { runOffThread } from ${JSON.stringify(module)};
try { for (;;) openSync("/dev/null", "r"); } catch {}
const err = await runOffThread({ file: "true", args: [] }).then(() => null, (e) => e);
process.stdout.write(JSON.stringify({ code: err?.code ?? null, message: String(err?.message) }));
process.exit(0);`;
  const ran = spawnSync("/bin/sh", ["-c", `ulimit -n 64 && exec "$0" --input-type=module -e "$1"`, process.execPath, script], { encoding: "utf8", timeout: 20_000 });
  const got = JSON.parse(ran.stdout || "{}") as { code?: string; message?: string };
  assert.equal(got.code, "EMFILE", ran.stdout + ran.stderr);
  assert.match(got.message ?? "", /^true: .*EMFILE/);
});
