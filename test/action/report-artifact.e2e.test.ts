/**
 * The report artifact (`upload-report`), run through the bundled action against a local fake of
 * the artifact service (fake-artifact-service.ts): the name and retention sent, the zip's files,
 * the report-url output and the links to it; nothing uploaded when turned off; no service or a
 * service error a warning that leaves the step's result and the reports as they were; a bad
 * `retention-days` an input error naming it. The artifact's name made pure, apart.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "../support/paths.js";
import { tempDir } from "../support/temp-dir.js";
import { readActionInputs, type ActionInputName } from "../../src/action/action-inputs.js";
import { reportArtifactName } from "../../src/action/report-artifact.js";
import { prepareJob, runStep, workflowCommands } from "./action-harness.js";
import { ARTIFACT_ID, JOB_BACKEND_ID, RUN_BACKEND_ID, runtimeToken, startArtifactService } from "./fake-artifact-service.js";
import { startGitHub } from "./fake-github.js";

const PASSING = { tasks: "tasks/arithmetic", filter: "arithmetic/fix-add", resume: "false" };
const REPORT_URL = `https://github.com/octo/repo/actions/runs/4242/artifacts/${ARTIFACT_ID}`;
const DAY_MS = 24 * 60 * 60 * 1000;

async function job(t: Parameters<typeof tempDir>[0]) {
  const root = await tempDir(t, "rhema-artifact-");
  const files = await prepareJob(root);
  await cp(join(repoRoot, "tasks"), join(files.workspace, "tasks"), { recursive: true });
  const event = join(root, "event.json");
  await writeFile(event, JSON.stringify({ pull_request: { number: 7 } }));
  return { ...files, event, runDir: join(files.workspace, ".rhema/runs/latest") };
}

test("uploads report.html and the three reports as rhema-report-<job>-<shard>-<attempt>, kept retention-days, and links it from the output, the job summary and the comment", async (t) => {
  const service = await startArtifactService();
  t.after(service.close);
  const github = await startGitHub();
  t.after(github.close);
  const j = await job(t);
  const before = Date.now();
  const step = await runStep(j, {
    inputs: { ...PASSING, shard: "1/1", "retention-days": "7", comment: "true", "github-token": "ghs_testtoken123" },
    env: { ...service.env(), GITHUB_RUN_ATTEMPT: "2", GITHUB_API_URL: github.url, GITHUB_EVENT_PATH: j.event },
  });
  assert.equal(step.code, 0, step.stdout + step.stderr);
  assert.deepEqual(workflowCommands(step.stdout, "warning"), []);

  // The wire: create, the zip as blocks then their list on the signed URL, finalize.
  const calls = service.seen.map((s) => `${s.method} ${s.url.replace(/blockid=[^&]+/, "blockid=ID")}`);
  assert.deepEqual(calls, [
    "POST /twirp/github.actions.results.api.v1.ArtifactService/CreateArtifact",
    "PUT /blob/artifact.zip?sig=fakesignature&comp=block&blockid=ID",
    "PUT /blob/artifact.zip?sig=fakesignature&comp=blocklist",
    "POST /twirp/github.actions.results.api.v1.ArtifactService/FinalizeArtifact",
  ], calls.join("\n"));
  const [create, , , finalize] = service.seen;
  assert.equal(create!.authorization, `Bearer ${runtimeToken()}`);
  const { expires_at: expiresAt, ...created } = create!.json!;
  assert.deepEqual(created, { workflow_run_backend_id: RUN_BACKEND_ID, workflow_job_run_backend_id: JOB_BACKEND_ID, name: "rhema-report-suite-1-of-1-2", mime_type: "application/zip", version: 7 });
  const keptMs = Date.parse(String(expiresAt)) - before;
  assert.ok(keptMs >= 7 * DAY_MS - 60_000 && keptMs <= 7 * DAY_MS + 10 * 60_000, `expires_at ${String(expiresAt)}`);
  assert.equal(finalize!.json!.name, "rhema-report-suite-1-of-1-2");

  // The zip holds the run directory's four reports at its top, byte for byte.
  const zip = service.zip();
  assert.ok(zip !== null && zip.length > 0, "a committed zip");
  const zipFile = join(j.runnerDir, "artifact.zip");
  await writeFile(zipFile, zip);
  const listed = execFileSync("zipinfo", ["-1", zipFile], { encoding: "utf8" }).trim().split("\n").sort();
  assert.deepEqual(listed, ["junit.xml", "report.html", "stats.json", "summary.md"]);
  for (const name of listed) assert.ok(execFileSync("unzip", ["-p", zipFile, name]).equals(await readFile(join(j.runDir, name))), name);

  assert.equal(step.outputs["report-url"], REPORT_URL);
  const link = `[report.html (artifact)](${REPORT_URL})`;
  assert.ok((await readFile(join(j.runnerDir, "summary.md"), "utf8")).includes(link), "the job summary links the artifact");
  assert.equal(github.comments.length, 2);
  assert.ok(github.comments[1]!.body.trimEnd().endsWith(` · ${link}`), github.comments[1]!.body);
});

test("upload-report: false uploads nothing, links nothing and warns of nothing", async (t) => {
  const service = await startArtifactService();
  t.after(service.close);
  const j = await job(t);
  const step = await runStep(j, { inputs: { ...PASSING, "upload-report": "false" }, env: service.env() });
  assert.equal(step.code, 0, step.stdout + step.stderr);
  assert.deepEqual(service.seen, []);
  assert.equal(step.outputs["report-url"], "");
  assert.deepEqual(workflowCommands(step.stdout, "warning"), []);
  assert.doesNotMatch(await readFile(join(j.runnerDir, "summary.md"), "utf8"), /artifact/);
});

test("no artifact service is a warning: the step passes, the reports stay in the run directory", async (t) => {
  const j = await job(t);
  const step = await runStep(j, { inputs: PASSING });
  assert.equal(step.code, 0, step.stdout + step.stderr);
  assert.deepEqual(workflowCommands(step.stdout, "warning"), [
    `::warning title=rhema%3A no report artifact::rhema: report.html and the reports were not uploaded as the artifact rhema-report-suite-all-1: no artifact service here (ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL unset); they stay in ${j.runDir}`,
  ]);
  assert.equal(step.outputs["report-url"], "");
  for (const f of ["report.html", "junit.xml", "stats.json", "summary.md"]) assert.ok(existsSync(join(j.runDir, f)), f);
});

test("a service error is a warning: a failing run fails as it would have, with its reports", async (t) => {
  // 403 is not retried; a 500 is, five times over some 25 s (the SDK's backoff), then ends the same way.
  const service = await startArtifactService({ failWith: 403 });
  t.after(service.close);
  const j = await job(t);
  const step = await runStep(j, { inputs: { tasks: "tasks/arithmetic", filter: "arithmetic/wrong-fix", resume: "false" }, env: service.env() });
  assert.equal(step.code, 1, step.stdout + step.stderr);
  assert.equal(service.seen.length, 1, "CreateArtifact once, not retried");
  const [warning, ...more] = workflowCommands(step.stdout, "warning");
  assert.deepEqual(more, []);
  assert.match(warning!, /^::warning title=rhema%3A no report artifact::rhema: report\.html and the reports were not uploaded as the artifact rhema-report-suite-all-1: Failed to CreateArtifact: .*\(403\).*; they stay in /);
  assert.equal(workflowCommands(step.stdout, "error").at(-1), "::error::rhema: 1 task did not pass: arithmetic/wrong-fix");
  assert.equal(step.outputs["report-url"], "");
  for (const f of ["report.html", "junit.xml", "stats.json", "summary.md"]) assert.ok(existsSync(join(j.runDir, f)), f);
});

test("a bad retention-days fails the step naming the input", async (t) => {
  const read = (value: string) => () => readActionInputs((name: ActionInputName) => (name === "tasks" ? "tasks" : name === "retention-days" ? value : undefined));
  for (const bad of ["0", "91", "abc", "1.5", "-3"]) {
    assert.throws(read(bad), { message: `input "retention-days": Expected a whole number of days from 1 to 90, or nothing for the repository's setting, got "${bad}"` }, bad);
  }
  assert.equal(readActionInputs((name) => (name === "tasks" ? "tasks" : name === "retention-days" ? "90" : undefined)).retentionDays, 90);
  assert.equal(readActionInputs((name) => (name === "tasks" ? "tasks" : undefined)).retentionDays, null);
  const j = await job(t);
  const step = await runStep(j, { inputs: { ...PASSING, "retention-days": "1.5" } });
  assert.equal(step.code, 1);
  assert.deepEqual(workflowCommands(step.stdout, "error"), [`::error::rhema: input "retention-days": Expected a whole number of days from 1 to 90, or nothing for the repository's setting, got "1.5"`]);
});

test("the artifact's name: job, shard as i-of-n or all, attempt; what artifact names forbid becomes _", () => {
  assert.equal(reportArtifactName({ job: "suite", shard: null, attempt: 1 }), "rhema-report-suite-all-1");
  assert.equal(reportArtifactName({ job: "suite", shard: " 2 / 3 ", attempt: 4 }), "rhema-report-suite-2-of-3-4");
  assert.equal(reportArtifactName({ job: 'a"b:c<d>e|f*g?h\\i/j\r\nk', shard: "1/2", attempt: 1 }), "rhema-report-a_b_c_d_e_f_g_h_i_j__k-1-of-2-1");
});
