/**
 * The quarantine file: bare labels and `{task, reason}` entries read alike; each mistake is a
 * QuarantineFileError at its line; an unknown task is a warning at its entry; what
 * `renderQuarantineFile` writes reads back to the same entries.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdir, writeFile } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import {
  QuarantineFileError, loadQuarantineFile, parseQuarantineText, quarantineEntries, renderQuarantineFile, unknownQuarantineWarnings,
} from "../../../src/runner/tasks/quarantine-file.js";
import { tempDir } from "../../support/temp-dir.js";

const VALID = `version: 1
quarantine:
  - arithmetic/flaky-fix
  - task: web-api/login
    reason: flaky in 3 of the last 10 runs
`;

test("bare labels and task entries give the quarantined tasks, a nested suite split at the last slash", () => {
  const list = parseQuarantineText(VALID, "/q.yaml");
  assert.deepEqual(list, {
    file: "/q.yaml",
    entries: [
      { suite: "arithmetic", id: "flaky-fix", reason: null, at: { line: 3, column: 5 } },
      { suite: "web-api", id: "login", reason: "flaky in 3 of the last 10 runs", at: { line: 4, column: 5 } },
    ],
  });
});

function problems(text: string): string {
  try {
    parseQuarantineText(text, "q.yaml");
  } catch (err) {
    assert.ok(err instanceof QuarantineFileError, String(err));
    assert.equal(err.code, "invalid_input");
    return err.message;
  }
  assert.fail("expected a QuarantineFileError");
}

test("each mistake is named at its line and field", () => {
  assert.equal(problems(""), "q.yaml:1:1: (root): the quarantine file is empty: it needs version: 1 and quarantine: [suite/id, …]");
  assert.equal(problems("quarantine: []\n"), "q.yaml:1:1: (root): missing key `version`");
  assert.equal(problems("version: 2\nquarantine: []\n"), "q.yaml:1:10: version: expected version: 1");
  assert.equal(problems("version: 1\nquarantine:\n  - arithmetic\n"),
    "q.yaml:3:5: quarantine.0: expected a task label suite/id (the task file's folder and its id; no glob, no #repeat or @variant)");
  assert.equal(problems("version: 1\nquarantine:\n  - task: a/b#2\n"),
    "q.yaml:3:11: quarantine.0.task: expected a task label suite/id (the task file's folder and its id; no glob, no #repeat or @variant)");
  assert.equal(problems("version: 1\nquarantine:\n  - a/b\n  - task: a/b\n"), "q.yaml:4:5: quarantine.1: a/b is already listed as quarantine.0");
  assert.equal(problems("version: 1\nquarantine:\n  - task: a/b\n    reasn: x\n"), "q.yaml:4:5: quarantine.0: unknown key `reasn`");
  assert.equal(problems("version: 1\nquarantine:\n  - { reason: x }\n"), "q.yaml:3:5: quarantine.0: missing key `task`");
  assert.equal(problems("version: 1\nquarantine: a/b\n"), "q.yaml:2:13: quarantine: expected a list of task labels");
  assert.match(problems("version: 1\nquarantine: [a/b\n"), /^q\.yaml:\d+:\d+: yaml: /);
});

test("a listed task the suite does not define is a warning at its entry, not an error", () => {
  const list = parseQuarantineText(VALID, "/q.yaml");
  assert.deepEqual(unknownQuarantineWarnings(list, [{ suite: "arithmetic", id: "flaky-fix" }]), [
    "/q.yaml:4:5: quarantine lists web-api/login, which the suite does not define: the entry is ignored (remove it, or fix the label)",
  ]);
});

test("a written quarantine file reads back to its entries", () => {
  const entries = [
    { suite: "arithmetic", id: "flaky-fix", reason: 'flaky in 2 of the last 3 runs: "x" # y' },
    { suite: "refactor", id: "rename", reason: null },
  ];
  const text = renderQuarantineFile(entries, ["proposed by rhema report trend"]);
  assert.deepEqual(quarantineEntries(parseQuarantineText(text, "q.yaml")), entries);
  assert.deepEqual(quarantineEntries(parseQuarantineText(renderQuarantineFile([]), "q.yaml")), []);
});

test("a FIFO, a folder or a missing file is refused unread, naming it", async (t) => {
  const dir = await tempDir(t);
  const fifo = join(dir, "q fifo ü.yaml");
  execFileSync("mkfifo", [fifo]);
  await mkdir(join(dir, "folder"));
  for (const [path, why] of [[fifo, /is a FIFO/], [join(dir, "folder"), /EISDIR/], [join(dir, "missing", "q.yaml"), /ENOENT/]] as const) {
    await assert.rejects(loadQuarantineFile(path), (err: unknown) => {
      assert.ok(err instanceof QuarantineFileError);
      assert.ok(err.message.startsWith(`${path}:1:1: file: cannot read the quarantine file: `), err.message);
      assert.match(err.message, why);
      return true;
    });
  }
  const good = join(dir, "q ü.yaml");
  await writeFile(good, VALID);
  assert.equal((await loadQuarantineFile(good)).entries.length, 2);
});
