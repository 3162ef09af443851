/**
 * report.html through the built CLI: a real run of a scripted suite (a pass, a failed check, a
 * policy denial) writes the page at its end; `rhema report html` on the run directory writes the
 * same bytes again, and renders a trial whose events.jsonl ends in a torn line; a missing
 * directory is exit 2 naming it; an interrupted run's page lists its trials without a result.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFile, lstat, readFile, stat, symlink } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { runCli, startCli } from "../support/cli.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { VIEWER_POLICY, WAITING_TASK, embeddedData, viewerTask } from "../support/report-html-run.js";
import { exists, waitFor } from "../support/wait.js";

const task = (prompt: string, call: string, check: string) => viewerTask(prompt, call, `done with ${prompt}`, check);

test("a run writes a self-contained report.html of every trial, and report html writes it again byte for byte", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": VIEWER_POLICY,
    "suite/pass.yaml": task("Say hello.", `{ call: shell, input: { command: "echo '</script>hello'" } }`, "true"),
    "suite/fail.yaml": task("Write out.txt.", `{ call: write_file, input: { path: out.txt, content: "hi" } }`, "grep bye out.txt"),
    "suite/deny.yaml": task("Remove src.", `{ call: shell, input: { command: "rm -rf src" } }`, "true"),
  });
  const out = join(root, "run");
  const run = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(run.code, 1, run.stderr);
  const page = join(out, "report.html");
  const html = await readFile(page, "utf8");
  assert.equal((await stat(page)).mode & 0o777, 0o600);
  assert.deepEqual(html.match(/\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?\/\//gi), null, "nothing is loaded from the network");
  const data = embeddedData(html);
  assert.deepEqual(data.trials.map((x) => [x.key, x.status, x.denials]), [["suite/deny#1", "passed", 1], ["suite/fail#1", "failed", 0], ["suite/pass#1", "passed", 0]]);
  assert.deepEqual({ passed: data.run.counts.passed, failed: data.run.counts.failed }, { passed: 2, failed: 1 });
  const [deny, fail, pass] = data.trials;
  assert.deepEqual(deny!.steps[0]!.calls[0]!.decision, { decision: "deny", rule: "rule 3 (policy.yaml:6)", reason: "no rm: ever" });
  assert.equal(fail!.checks[0]!.passed, false);
  assert.match(fail!.patch ?? "", /\+hi/);
  assert.equal(pass!.prompt, "Say hello.");
  assert.match(pass!.steps[0]!.calls[0]!.result ?? "", /^<\/script>hello/);
  assert.equal(pass!.steps[1]!.text, "done with Say hello.");

  const again = await runCli(["report", "html", out], { cwd: root });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(await readFile(page, "utf8"), html, "the same run directory gives the same page");

  // A torn last line (a run killed mid-append) is passed over: the page renders the trial from the whole lines.
  await appendFile(join(out, "tasks/suite/fail/default/1/events.jsonl"), '{"at":"2026-01-01T00:00:00.000Z","type":"tool_call","step":9,"callId":"x","na');
  const torn = await runCli(["report", "html", out], { cwd: root });
  assert.equal(torn.code, 0, torn.stderr);
  assert.deepEqual(embeddedData(await readFile(page, "utf8")).trials[1], fail, "the torn line left out, nothing else changed");
  t.diagnostic(`report.html: ${Buffer.byteLength(html)} bytes`);
});

test("report html on a missing run directory is exit 2 naming it", async (t) => {
  const root = await tempDir(t);
  const missing = join(root, "no-such-run");
  const run = await runCli(["report", "html", "no-such-run"], { cwd: root });
  assert.equal(run.code, 2, run.stderr);
  assert.ok(run.stderr.includes(`Run directory not found: ${missing}`), run.stderr);
  assert.ok(!/\n\s+at /.test(run.stderr), "no stack trace");
});

test("report html's paths: an empty DIR or --out, a folder that is no run, a FIFO, a device (root), a link or a folder as --out are exit 2 naming them with nothing written; a link to a run, a path of spaces and unicode and a missing --out parent work", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": VIEWER_POLICY, "suite/pass.yaml": task("Say hello.", `{ call: shell, input: { command: "echo hi" } }`, "true") });
  const runDir = "run dir é";
  assert.equal((await runCli(["run", "suite", "--out", runDir], { cwd: root })).code, 0);
  execFileSync("mkfifo", [join(root, "fifo")]);
  const ROOT = process.getuid?.() === 0;
  // Made in the temp folder only (never a path under /dev): /dev/null's numbers.
  if (ROOT) execFileSync("mknod", [join(root, "dev"), "c", "1", "3"]);
  else t.diagnostic("not root: no device node (mknod needs CAP_MKNOD)");
  await symlink(runDir, join(root, "link"));
  const refused: [string[], string][] = [
    [[""], 'got ""'], [["."], `got ${root}, which holds no`], [["fifo"], "which is not a folder"], [["no-such-run"], "Run directory not found"],
    [[runDir, "--out", ""], 'got ""'], [[runDir, "--out", "fifo"], "which is a FIFO"], [[runDir, "--out", "link"], "which is a link"], [[runDir, "--out", runDir], "which is a folder"],
    ...(ROOT ? [[["dev"], "which is not a folder"], [[runDir, "--out", "dev"], "which is not a regular file"]] as [string[], string][] : []),
  ];
  for (const [args, says] of refused) {
    const r = await runCli(["report", "html", ...args], { cwd: root });
    assert.equal(r.code, 2, `${JSON.stringify(args)}: ${r.stderr}`);
    assert.ok(r.stderr.includes(says) && !/\n\s+at /.test(r.stderr), `${JSON.stringify(args)} says ${says}: ${r.stderr}`);
  }
  assert.ok((await lstat(join(root, "fifo"))).isFIFO(), "the FIFO is still one");
  if (ROOT) assert.ok((await lstat(join(root, "dev"))).isCharacterDevice(), "the device is still one");
  assert.ok((await lstat(join(root, "link"))).isSymbolicLink(), "the link is still one");
  for (const [args, written] of [[["link"], join(root, "link", "report.html")], [[runDir, "--out", "new dir/é page.html"], join(root, "new dir/é page.html")]] as const) {
    const r = await runCli(["report", "html", ...args], { cwd: root });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes(`wrote ${written}`), r.stdout);
    assert.match(await readFile(written, "utf8"), /^<!DOCTYPE html>/);
  }
});

test("a run interrupted by SIGINT writes report.html listing the interrupted trial with its conversation so far and the trial not started; so does its merge", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": VIEWER_POLICY, "suite/a-wait.yaml": WAITING_TASK, "suite/b-later.yaml": task("Say hello.", `{ call: shell, input: { command: "echo hi" } }`, "true") });
  const out = join(root, "run");
  const run = startCli(["run", "suite", "--out", out, "--concurrency", "1"], { cwd: root });
  await waitFor(() => exists(join(out, "tasks/suite/a-wait/default/1/workspace/started")));
  run.child.kill("SIGINT");
  assert.equal((await run.done).code, 130);
  const data = embeddedData(await readFile(join(out, "report.html"), "utf8"));
  assert.deepEqual(data.trials.map((x) => [x.key, x.status]), [["suite/a-wait#1", "interrupted"], ["suite/b-later#1", "not_started"]]);
  const [wait, later] = data.trials;
  assert.equal(wait!.prompt, "Write out.txt, then wait.");
  assert.deepEqual(wait!.steps.map((s) => [s.n, s.calls.map((c) => `${c.name} ${c.decision?.decision}`)]), [[1, ["write_file allow"]], [2, ["shell allow"]]]);
  assert.equal(wait!.steps[1]!.text, "now I wait");
  assert.match(wait!.notes[0]!, /^interrupted: /);
  assert.deepEqual([later!.steps, later!.prompt, later!.notes[0]], [[], null, "not started: the run stopped before it started (the same command starts it)"]);

  // Merged, the interrupted trial's events and checkpoint come along: the merged page shows the same trials.
  const merged = await runCli(["report", "merge", out, "--out", join(root, "merged")], { cwd: root });
  assert.equal(merged.code, 0, merged.stderr);
  assert.deepEqual(embeddedData(await readFile(join(root, "merged", "report.html"), "utf8")).trials, data.trials);
});
