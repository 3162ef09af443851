/**
 * report.html through the built CLI: a real run of a scripted suite (a pass, a failed check, a
 * policy denial) writes the page at its end; `rhema report html` on the run directory writes the
 * same bytes again; a missing directory is exit 2 naming it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import type { HtmlReportData } from "../../src/runner/reports/report-html-data.js";

const POLICY = `version: 1
default: deny
rules:
  - allow: { shell: ["echo *", "true"] }
  - allow: { paths: ["out.txt"] }
  - deny: { shell: ["rm *"], reason: "no rm: ever" }
`;
const task = (prompt: string, call: string, check: string) => `prompt: ${prompt}
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - calls:
        - ${call}
    - say: done with ${prompt}
checks:
  - { name: the check, run: "${check}" }
`;

function embeddedData(html: string): HtmlReportData {
  const open = html.indexOf(">", html.indexOf('id="rhema-data"')) + 1;
  return JSON.parse(html.slice(open, html.indexOf("</script", open))) as HtmlReportData;
}

test("a run writes a self-contained report.html of every trial, and report html writes it again byte for byte", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": POLICY,
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
