/**
 * Every file rhema writes that has a published schema validates against it (issue 26, item 7),
 * through the built CLI: the example suite (`tasks/`, offline, with `--json`), a repeated flaky
 * task with the early stop, a matrix whose small cell errors, two shards and their `report
 * merge`, the example suite's cassettes (`--cassette DIR`), and `report compare --json`. Each run directory is
 * walked whole, so a new kind of file is not skipped in silence: a JSON file that no schema below
 * claims fails the test unless INTERNAL_FILES lists it, saying why it has no published schema.
 *
 * Claimed: result.json (schema/result.schema.json), stats.json (stats.schema.json), junit.xml
 * (schema/junit/junit-10-ext.xsd), each events.jsonl line (the task events of
 * events.schema.json, the same shapes `--json` prints, with the time logged), every `--json`
 * stdout line (events.schema.json), each cassette line (cassette.schema.json), compare's JSON
 * (compare.schema.json) and each output.json (the schema its task's `output:` names).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import type { ValidateFunction } from "ajv/dist/2020.js";
import { runCli } from "../support/cli.js";
import { repoRoot } from "../support/paths.js";
import { assertValid, assertValidJUnit, publishedSchemas } from "../support/published-schemas.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const schemas = publishedSchemas();
const TASK_EVENT = "events.schema.json#/$defs/line_task_event/properties/event";

/** How a claimed file is checked; `kind` is what the counts are kept by. */
interface Claim {
  kind: string;
  /** Matched against the path relative to the walked directory, `/`-separated. */
  path: RegExp;
  check: (text: string, where: string) => Promise<void> | void;
}

const jsonFile = (name: `${string}.schema.json`) => (text: string, where: string) => assertValid(schemas.validator(name), JSON.parse(text), where);

/** Each non-empty line as JSON, validated; `shape` makes a line what the schema describes. */
function jsonLines(validate: () => ValidateFunction, shape: (line: Record<string, unknown>) => unknown = (line) => line) {
  return (text: string, where: string) => {
    const lines = text.split("\n").filter((l) => l !== "");
    assert.ok(lines.length > 0, `${where} is empty`);
    lines.forEach((line, k) => assertValid(validate(), shape(JSON.parse(line) as Record<string, unknown>), `${where}:${k + 1}`));
  };
}

/** The files of a run directory that have a published schema. */
const RUN_DIR_CLAIMS: Claim[] = [
  { kind: "result.json", path: /^tasks\/.+\/result\.json$/, check: jsonFile("result.schema.json") },
  { kind: "stats.json", path: /^stats\.json$/, check: jsonFile("stats.schema.json") },
  { kind: "junit.xml", path: /^junit\.xml$/, check: (text, where) => assertValidJUnit(text, where) },
  // A trial's event log: each line one task event as `--json` prints it inside task_event, with the
  // time it was logged (`at`; turn_start's own `at` is the event's).
  { kind: "events.jsonl", path: /^tasks\/.+\/events\.jsonl$/, check: jsonLines(() => schemas.validator(TASK_EVENT as `${string}.schema.json`), ({ at, ...event }) => (event.type === "turn_start" ? { at, ...event } : event)) },
  // A task with `output:` writes its accepted answer: validated against the schema its task names
  // (the one task with `output:` below, ANSWER_SCHEMA), the file's published schema being the task's own.
  { kind: "output.json", path: /^tasks\/.+\/output\.json$/, check: (text, where) => assertValid(schemas.ajv.compile(ANSWER_SCHEMA), JSON.parse(text), where) },
];

/** The files of a cassette folder (`--cassette DIR`). */
const CASSETTE_CLAIMS: Claim[] = [
  { kind: "cassette", path: /^[^/]+\/[^/]+\/[^/]+\/\d+\.jsonl$/, check: jsonLines(() => schemas.validator("cassette.schema.json")) },
];

/**
 * JSON files rhema writes that have no published schema, and why. Each is versioned and checked
 * on read by the code that owns it; none is meant for other programs.
 */
const INTERNAL_FILES: [RegExp, string][] = [
  [/^manifest\.json$/, "the run's own plan and bookkeeping (tasks, trials, hashes, resumes), migrated by run-dir code: an internal format"],
  [/^tasks\/.+\/task-state\.json$/, "a trial's checkpoint of its setup, turn and checks (what to redo after a kill)"],
  [/^tasks\/.+\/session\.json$/, "the agent session's checkpoint (messages, calls) a resume continues from"],
  [/^tasks\/.+\/session\.journal\.jsonl$/, "the session's append-only journal between checkpoints"],
  [/^tasks\/.+\/session\.fingerprint\.json$/, "what the session's checkpoint was made with, so a resume can refuse a different one"],
  [/^tasks\/.+\/layer\/deletions\.json$/, "an overlay-layer workspace's record of deleted paths (workspace-layers.ts)"],
  [/^tasks\/.+\/cassette-used\.json$/, "a replayed trial's bookkeeping of the exchanges it answered from (cassette prune reads it)"],
  [/^prepared\/[^/]+\/prepare-state\.json$/, "a shared setup's state (its key, commands started/done, outcome)"],
  [/^rhema\.lock$/, "the lock's owner record (run-lock.ts): there only while a run holds the directory"],
];

/** Folders whose contents are not rhema's formats: the agent's and fixtures' files, and git's. */
const NOT_RHEMA_FORMATS = /(^|\/)(workspace|upper|changes\.git|changes-indexes|changes-objects|mounts|git-mirrors)$/;

/** Cassette folder files that are not cassettes. */
const CASSETTE_INTERNAL: [RegExp, string][] = [
  [/^\.rhema-recording\.lock$/, "the recorder's lock (owner, heartbeat): held while a run records"],
];

async function filesUnder(dir: string, root = dir): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = relative(root, path).split("\\").join("/");
    if (entry.isDirectory()) {
      if (!NOT_RHEMA_FORMATS.test(rel)) out.push(...(await filesUnder(path, root)));
    } else if (entry.isFile()) {
      out.push(rel);
    }
  }
  return out;
}

/** Validates every claimed file under `dir`; fails on a JSON file neither claimed nor internal. Returns how many of each kind. */
async function validateTree(dir: string, claims: readonly Claim[], internal: readonly [RegExp, string][], counts: Map<string, number>): Promise<void> {
  for (const rel of await filesUnder(dir)) {
    const where = join(dir, rel);
    const claim = claims.find((c) => c.path.test(rel));
    if (claim !== undefined) {
      await claim.check(await readFile(where, "utf8"), where);
      counts.set(claim.kind, (counts.get(claim.kind) ?? 0) + 1);
    } else if (/\.jsonl?$/.test(rel) || rel.endsWith(".lock")) {
      assert.ok(internal.some(([path]) => path.test(rel)), `${where}: a JSON file no published schema claims and INTERNAL_FILES does not list`);
    }
  }
}

/** Every `--json` stdout line against events.schema.json. */
function validateJsonLines(stdout: string, where: string): void {
  jsonLines(() => schemas.validator("events.schema.json"))(stdout, `${where} --json stdout`);
}

/** The answer schema of the structured-output task (s/answer.yaml). */
const ANSWER_SCHEMA = {
  type: "object", properties: { verdict: { enum: ["pass", "fail"] }, score: { type: "integer", minimum: 0 } },
  required: ["verdict", "score"], additionalProperties: false,
};

const ANSWER = `prompt: Judge, and answer with final_answer.
policy: ../policy.yaml
model:
  provider: scripted
  script: [{ call: final_answer, input: { verdict: pass, score: 3 } }]
output:
  schema: ${JSON.stringify(ANSWER_SCHEMA)}
checks:
  - { name: answered, run: 'grep -q pass "$RHEMA_OUTPUT"' }
`;

const FLAKY = `prompt: Say good.
repeats: 4
model:
  provider: scripted
  pick: repeat
  scripts:
    - script: [{ say: bad }]
    - script: [{ say: good }]
checks:
  - { name: says good, run: 'grep -qx good "$RHEMA_FINAL_ANSWER"' }
`;

const TWO_STEPS = `prompt: List, then say good.
policy: ../policy.yaml
model:
  provider: scripted
  script: [{ call: list_dir, input: { path: "." } }, { say: good }]
checks:
  - { name: says good, run: 'grep -qx good "$RHEMA_FINAL_ANSWER"' }
`;

const MATRIX = `matrix:
  limits:
    - { id: s1, maxSteps: 1 }
    - { id: s5, maxSteps: 5 }
`;

test("every file rhema writes validates against its published schema: the example suite, a flaky repeated task, a matrix, shards and their merge, cassettes, compare", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "s/flaky.yaml": FLAKY, "s/steps.yaml": TWO_STEPS, "s/answer.yaml": ANSWER, "matrix.yaml": MATRIX });
  const counts = new Map<string, number>();
  const run = async (args: string[], cwd = root) => {
    const ran = await runCli(["run", ...args, "--json", "--sandbox", "off"], { cwd });
    assert.ok(ran.code === 0 || ran.code === 1, `rhema run ${args.join(" ")}: exit ${ran.code}\n${ran.stderr}`);
    validateJsonLines(ran.stdout, args.join(" "));
    counts.set("--json line", (counts.get("--json line") ?? 0) + ran.stdout.split("\n").filter((l) => l !== "").length);
  };

  // The example suite, offline, recording its cassettes; the repeated flaky task with the early stop; a matrix.
  const example = join(root, "example");
  await run(["tasks", "--out", example, "--cassette", join(root, "cassettes")], repoRoot);
  await run(["s", "--out", join(root, "flaky"), "--stop-early", "--pass-at", "1,2"]);
  await run(["s", "--out", join(root, "matrix"), "--matrix", "matrix.yaml", "--repeats", "2"]);
  // Two shards, their merge, and the unsharded run compared with it.
  for (const shard of ["1/2", "2/2"]) await run(["s", "--out", join(root, `shard-${shard[0]}`), "--shard", shard]);
  const merge = await runCli(["report", "merge", join(root, "shard-1"), join(root, "shard-2"), "--out", join(root, "merged"), "--junit-cases", "check"], { cwd: root });
  assert.equal(merge.code, 0, merge.stderr);

  for (const dir of ["example", "flaky", "matrix", "shard-1", "shard-2", "merged"]) {
    await validateTree(join(root, dir), RUN_DIR_CLAIMS, INTERNAL_FILES, counts);
  }
  await validateTree(join(root, "cassettes"), CASSETTE_CLAIMS, CASSETTE_INTERNAL, counts);

  const compare = await runCli(["report", "compare", join(root, "flaky"), join(root, "merged"), "--fail-on", "never", "--json", join(root, "compare.json")], { cwd: root });
  assert.equal(compare.code, 0, compare.stderr);
  jsonFile("compare.schema.json")(await readFile(join(root, "compare.json"), "utf8"), "compare.json");

  // Each kind was seen, so a claim whose path no longer matches fails here instead of checking nothing.
  const seen = Object.fromEntries([...counts].map(([kind, n]) => [kind, n > 0]));
  assert.deepEqual(seen, { "--json line": true, "result.json": true, "stats.json": true, "junit.xml": true, "events.jsonl": true, "output.json": true, cassette: true });
  assert.equal(counts.get("stats.json"), 6, "every run directory's stats.json");
  assert.ok(counts.get("cassette")! >= 10, `a cassette per trial of the example suite: ${counts.get("cassette")}`);
});
