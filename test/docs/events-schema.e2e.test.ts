/**
 * schema/events.schema.json against what `rhema run --json` prints, both ways. Through the
 * built CLI: the example suite (passing and failing checks, run twice so results are kept), a
 * suite of failures (setup, provider, denial, priced usage, compaction flushes) and an
 * interrupted run — every stdout line validates. And the schema's line and event types are
 * exactly the tags of `RunProgress` and `TaskEvent` (the maps below do not compile when a tag is
 * added to or removed from those unions). The same runs' junit.xml files hold exactly the
 * testcase figures and testsuite properties docs/reports.md lists.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { RunProgress } from "../../src/runner/execute/suite-runner.js";
import type { TaskEvent } from "../../src/runner/run-dir/runner-events.js";
import { runCli, startCli } from "../support/cli.js";
import { repoRoot } from "../support/paths.js";
import { publishedSchemas } from "../support/published-schemas.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";
import { docTables, readDoc, unquote } from "../support/doc-tables.js";

/** Every `--json` line type: a tag added to RunProgress (or one removed) fails to compile here. */
const LINE_TYPES: { [K in RunProgress["type"]]: true } = {
  run_start: true, task_start: true, task_event: true, task_end: true, task_interrupted: true, trial_skipped: true, run_end: true,
};

/** Every task event type, the agent's and the runner's, likewise. */
const EVENT_TYPES: { [K in TaskEvent["type"]]: true } = {
  turn_start: true, request: true, text: true, tool_call: true, approval: true, tool_result: true, usage: true,
  revived: true, steer: true, flush: true, step_end: true, turn_end: true, turn_error: true,
  setup_start: true, setup_end: true, check_start: true, check_end: true, retry: true, cassette_live: true,
};

type Schema = { oneOf: { $ref: string }[]; $defs: Record<string, { properties: { type: { const: string }; event?: { oneOf: { $ref: string }[] } } }> };

const readJson = (rel: string): unknown => JSON.parse(readFileSync(join(repoRoot, rel), "utf8"));
const schema = readJson("schema/events.schema.json") as Schema;
const def = (ref: string) => schema.$defs[ref.replace("#/$defs/", "")]!;

function validator() {
  return publishedSchemas().validator("events.schema.json");
}

/** Validates every stdout line; returns the line types and event types seen. */
function checkLines(stdout: string, seen: { lines: Set<string>; events: Set<string> }): void {
  const validate = validator();
  const lines = stdout.split("\n").filter((l) => l !== "");
  assert.ok(lines.length > 0, "some --json lines");
  for (const text of lines) {
    const line = JSON.parse(text) as { type: string; event?: { type: string } };
    assert.ok(validate(line), `${text.slice(0, 300)}\n${JSON.stringify(validate.errors?.slice(0, 5), null, 1)}`);
    seen.lines.add(line.type);
    if (line.event) seen.events.add(line.event.type);
  }
  assert.deepEqual((({ type, eventsVersion }) => ({ type, eventsVersion }))(JSON.parse(lines[0]!) as { type: string; eventsVersion: number }), { type: "run_start", eventsVersion: 1 });
  assert.equal((JSON.parse(lines.at(-1)!) as { type: string }).type, "run_end");
}

test("the schema's line and event types are exactly those the code emits", () => {
  const lineTypes = schema.oneOf.map((r) => def(r.$ref).properties.type.const);
  assert.deepEqual([...lineTypes].sort(), Object.keys(LINE_TYPES).sort());
  const taskEvent = schema.oneOf.map((r) => def(r.$ref)).find((d) => d.properties.type.const === "task_event")!;
  const eventTypes = taskEvent.properties.event!.oneOf.map((r) => def(r.$ref).properties.type.const);
  assert.deepEqual([...eventTypes].sort(), Object.keys(EVENT_TYPES).sort());
});

const blockingTask = `prompt: Append the tags.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - call: shell
      input: { command: "echo t-0 >> tags.txt" }
    - call: shell
      input: { command: "echo t-1 >> tags.txt && sleep 60" }
    - say: done
checks:
  - { name: ok, run: "true" }
`;

const longTask = `prompt: Read the notes, part by part.
policy: ../policy.yaml
transcript: { budgetTokens: 3000, blockTokens: 300 }
limits: { maxSteps: 30 }
model:
  provider: scripted
  priceAs: claude-sonnet-4-6
  script:
${Array.from({ length: 20 }, (_, k) => `    - say: "part ${k}: ${"the quick brown fox ".repeat(20)}"\n      call: shell\n      input: { command: "echo ${"notes ".repeat(40)}" }\n`).join("")}    - say: done
checks:
  - { name: ok, run: "true" }
`;

test("every line `rhema run --json` prints validates against schema/events.schema.json: the example suite, failures, an interrupted run", async (t) => {
  const dir = await tempDir(t);
  const seen = { lines: new Set<string>(), events: new Set<string>() };

  // The example suite, twice: the second run keeps the results (task_end kept).
  for (const round of [1, 2]) {
    const run = await runCli(["run", "tasks/arithmetic", "--json", "--out", join(dir, "example")], { cwd: repoRoot });
    assert.equal(run.code, 1, `round ${round}: wrong-fix fails\n${run.stderr}`);
    checkLines(run.stdout, seen);
  }

  // Failures of every kind, a denial, priced usage and compaction flushes.
  await writeFiles(dir, {
    "fail/policy.yaml": OPEN_POLICY,
    "fail/setup.yaml": "prompt: x\npolicy: ./policy.yaml\nworkspace: { setup: [\"no-such-command-here\"] }\nmodel: { provider: scripted, script: [{ say: hi }] }\n",
    "fail/provider.yaml": "prompt: x\npolicy: ./policy.yaml\nmodel: { provider: scripted, script: [{ fail: { message: outage, status: 400 } }] }\n",
    "fail/denied.yaml": "prompt: x\npolicy: ./policy.yaml\nmodel:\n  provider: scripted\n  script:\n    - call: write_file\n      input: { path: secret.txt, content: x }\n    - say: done\nchecks:\n  - { name: no file, run: \"test ! -e secret.txt\" }\n",
    "fail/long/read.yaml": longTask,
  });
  const failures = await runCli(["run", "fail", "--json", "--out", join(dir, "failures")], { cwd: dir });
  assert.equal(failures.code, 1, failures.stderr);
  checkLines(failures.stdout, seen);

  // Repeats with the early stop: trial labels, and trial_skipped for the trials the gate decided without.
  await writeFiles(dir, {
    "repeat/flaky.yaml": "prompt: x\nrepeats: 3\nmodel:\n  provider: scripted\n  priceAs: claude-sonnet-4-6\n  pick: repeat\n  scripts:\n    - script: [{ say: bad }]\n    - script: [{ say: good }]\n" +
      "checks:\n  - { name: good, run: 'grep -qx good \"$RHEMA_FINAL_ANSWER\"' }\n",
  });
  const repeated = await runCli(["run", "repeat", "--json", "--concurrency", "1", "--stop-early", "--pass-at", "1,2", "--out", join(dir, "repeated")], { cwd: dir });
  assert.equal(repeated.code, 1, repeated.stderr);
  checkLines(repeated.stdout, seen);

  // Interrupted: task_interrupted, and run_end with the unfinished task.
  await writeFiles(dir, { "policy.yaml": OPEN_POLICY, "slow/block.yaml": blockingTask });
  const out = join(dir, "interrupted");
  const run = startCli(["run", "slow", "--json", "--out", out], { cwd: dir });
  await waitFor(async () => (await readFile(join(out, "tasks/slow/block/default/1/workspace/tags.txt"), "utf8").catch(() => "")).includes("t-1"));
  run.child.kill("SIGINT");
  const interrupted = await run.done;
  assert.equal(interrupted.code, 130, interrupted.stderr);
  checkLines(interrupted.stdout, seen);

  assert.deepEqual([...seen.lines].sort(), Object.keys(LINE_TYPES).sort(), "every line type was printed and checked");
  await checkJUnitProperties(["example", "failures", "repeated", "interrupted"].map((name) => join(dir, name, "junit.xml")));
  const expected = ["turn_start", "request", "text", "tool_call", "approval", "tool_result", "usage", "flush", "step_end", "turn_end", "turn_error", "setup_start", "setup_end", "check_start", "check_end"];
  assert.deepEqual(expected.filter((type) => !seen.events.has(type)), [], `event types printed: ${[...seen.events].join(", ")}`);
});

/**
 * The property names of these junit.xml files (testcase `[[PROPERTY|…]]` lines, testsuite
 * `<property>`s) against docs/reports.md's two tables, both ways: `<stat>` there stands for each
 * transcript stat, `task.<id>.<figure>` for each testcase figure.
 */
async function checkJUnitProperties(files: string[]): Promise<void> {
  const figures = new Set<string>();
  const properties = new Set<string>();
  for (const file of files) {
    const xml = await readFile(file, "utf8");
    for (const m of xml.matchAll(/\[\[PROPERTY\|([^=\]]+)=/g)) figures.add(m[1]!);
    for (const m of xml.matchAll(/<property name="([^"]+)"/g)) properties.add(m[1]!.replace(/^task\.[^.]+\./, "task.<id>."));
  }
  const tables = docTables(readDoc("reports.md"));
  const rows = (heading: string) => tables.find((t) => t.heading === heading)!.rows.map((row) => unquote(row[0]!));
  const stats = rows("Transcript stats");
  // `<k>` stands for each k of --pass-at the runs asked for.
  const ofEachK = (name: string, seen: Set<string>) => [...seen].filter((n) => new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace("<k>", "[0-9]+")}$`).test(n));
  const expand = (name: string, prefix: string): string[] =>
    name === `${prefix}<stat>` ? stats.map((s) => prefix + s) : name === "task.<id>.<figure>" ? [...figures].map((f) => `task.<id>.${f}`)
      : name.includes("<k>") ? ofEachK(name, prefix === "" ? figures : properties) : [name];
  const documentedFigures = rows("Testcase figures").flatMap((name) => expand(name, ""));
  const documentedProperties = rows("Testsuite properties").flatMap((name) => expand(name, "suite."));
  const diff = (seen: Set<string>, documented: string[]) => ({
    undocumented: [...seen].filter((n) => !documented.includes(n)).sort(),
    neverWritten: documented.filter((n) => !seen.has(n)).sort(),
  });
  assert.deepEqual(diff(figures, documentedFigures), { undocumented: [], neverWritten: [] }, "testcase figures");
  assert.deepEqual(diff(properties, documentedProperties), { undocumented: [], neverWritten: [] }, "testsuite properties");
}
