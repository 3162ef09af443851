/**
 * The report artifact (`upload-report`), run through the bundled action against a local fake of
 * the artifact service (fake-artifact-service.ts): the name and retention sent, the zip's files,
 * the report-url output and the links to it; nothing uploaded when turned off; no service or a
 * service error (a 403, a 500 and an HTML answer, the last two after the SDK's retries) one
 * warning that leaves the step's result, outputs and reports as they were; an interrupted run's
 * report uploaded with its unfinished trials; a bad
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
import { reportArtifactName, uploadReportArtifact } from "../../src/action/report-artifact.js";
import { prepareJob, runStep, startStep, workflowCommands } from "./action-harness.js";
import { VIEWER_POLICY, WAITING_TASK, embeddedData, viewerTask } from "../support/report-html-run.js";
import { writeFiles } from "../support/suite-files.js";
import { exists, waitFor } from "../support/wait.js";
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

test("a 500, and an answer that is no JSON, each retried by the SDK, are one warning naming the failure: the step ends with the run's own outcome and sets its other outputs", async (t) => {
  const cases = [
    { service: { failWith: 500 }, inputs: PASSING, code: 0, says: /Failed to CreateArtifact: Failed to make request after 5 attempts: Failed request: \(500\) Internal Server Error: fake artifact service: failing on purpose/ },
    { service: { failWith: 502, body: "<html><body>502 Bad Gateway</body></html>" }, inputs: { ...PASSING, filter: "arithmetic/wrong-fix" }, code: 1, says: /Failed to CreateArtifact: Failed to make request after 5 attempts: .*JSON/ },
  ];
  await Promise.all(cases.map(async (c) => {
    const service = await startArtifactService(c.service);
    t.after(service.close);
    const j = await job(t);
    const step = await runStep(j, { inputs: c.inputs, env: service.env() });
    assert.equal(step.code, c.code, step.stdout + step.stderr);
    assert.equal(service.seen.length, 5, "CreateArtifact, tried five times");
    const warnings = workflowCommands(step.stdout, "warning");
    assert.equal(warnings.length, 1, warnings.join("\n"));
    assert.match(warnings[0]!, /^::warning title=rhema%3A no report artifact::rhema: report\.html and the reports were not uploaded as the artifact rhema-report-suite-all-1: /);
    assert.match(warnings[0]!, c.says);
    assert.deepEqual([step.outputs.passed, step.outputs.failed, step.outputs["report-url"]], c.code === 0 ? ["1", "0", ""] : ["0", "1", ""]);
    assert.match(await readFile(join(j.runnerDir, "summary.md"), "utf8"), /### rhema run/, "the job summary is written");
  }));
});

test("an interrupted run's report is uploaded: its report.html lists the interrupted trial with its steps so far and the trial not started", async (t) => {
  const service = await startArtifactService();
  t.after(service.close);
  const j = await job(t);
  await writeFiles(j.workspace, { "stopped/policy.yaml": VIEWER_POLICY, "stopped/suite/a-wait.yaml": WAITING_TASK, "stopped/suite/b-later.yaml": viewerTask("Say hi.", `{ call: shell, input: { command: "echo hi" } }`, "said hi", "true") });
  const step = await startStep(j, { inputs: { tasks: "stopped/suite", concurrency: "1", resume: "false" }, env: service.env() });
  await waitFor(() => exists(join(j.runDir, "tasks/suite/a-wait/default/1/workspace/started")));
  step.child.kill("SIGINT");
  const done = await step.finished;
  assert.match(done.stdout, /::error::rhema: the run was interrupted before it completed/);
  assert.deepEqual(workflowCommands(done.stdout, "warning"), []);
  assert.equal(done.outputs["report-url"], REPORT_URL);
  assert.equal(done.outputs.interrupted, "1");
  const zipFile = join(j.runnerDir, "artifact.zip");
  await writeFile(zipFile, service.zip()!);
  const page = execFileSync("unzip", ["-p", zipFile, "report.html"], { encoding: "utf8" });
  assert.equal(page, await readFile(join(j.runDir, "report.html"), "utf8"));
  const trials = embeddedData(page).trials;
  assert.deepEqual(trials.map((x) => [x.key, x.status]), [["suite/a-wait#1", "interrupted"], ["suite/b-later#1", "not_started"]]);
  assert.deepEqual(trials[0]!.steps.map((s) => s.calls.map((c) => c.name)), [["write_file"], ["shell"]]);
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

test("a name another step of the run took (a matrix over something else than shards) is uploaded as <name>-2, -3: two steps' reports never collide", async (t) => {
  const service = await startArtifactService();
  t.after(() => service.close());
  const runDir = await tempDir(t);
  await writeFiles(runDir, { "report.html": "<!doctype html><title>r</title>", "junit.xml": "<testsuites/>" });
  const env = { ...service.env(), GITHUB_REPOSITORY: "octo/repo", GITHUB_RUN_ID: "4242" };
  // The SDK reads the service's address and token from the process's environment, as in a step.
  const before = { ...process.env };
  const serviceEnv = service.env();
  Object.assign(process.env, serviceEnv);
  t.after(() => {
    for (const key of Object.keys(serviceEnv)) delete process.env[key];
    Object.assign(process.env, before);
  });
  const name = reportArtifactName({ job: "suite", shard: null, attempt: 1 });
  const uploads = [];
  for (let k = 0; k < 3; k++) uploads.push(await uploadReportArtifact(runDir, name, { env, retentionDays: null }));
  assert.deepEqual(uploads.map((u) => [u.kind, u.name]), [["uploaded", name], ["uploaded", `${name}-2`], ["uploaded", `${name}-3`]]);
  const created = service.seen.filter((r) => r.url.endsWith("/CreateArtifact")).map((r) => r.json!.name);
  assert.deepEqual(created, [name, name, `${name}-2`, name, `${name}-2`, `${name}-3`], "each taken name refused by the service once per try");
});
