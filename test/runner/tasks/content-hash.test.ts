/**
 * Content hashes: content-v2 ignores `limits`, `model.priceAs`, comments, formatting and key
 * order (so raising a budget continues a task), and changes with anything the model or the
 * checks see; file-bytes, kept for old run directories, changes with any byte.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { canonicalJson, hashUnder } from "../../../src/runner/tasks/content-hash.js";
import { parseTaskSource } from "../../../src/runner/tasks/task-file.js";

const BASE = `prompt: Fix it.
model:
  provider: scripted
  priceAs: claude-sonnet-4-5
  script:
    - say: done
limits: { maxSteps: 5, maxCostUsd: 0.01 }
checks:
  - { name: ok, run: "true" }
`;
const hashes = (text: string) => {
  const task = parseTaskSource(text, "/s/suite/t.yaml");
  return { content: task.contentHash, bytes: task.fileBytesHash! };
};

test("raising a budget or a limit, or pricing as another model, keeps the content hash; the file-bytes hash changes", () => {
  const base = hashes(BASE);
  for (const edited of [
    BASE.replace("maxCostUsd: 0.01", "maxCostUsd: 5, maxTokens: 90000"),
    BASE.replace("limits: { maxSteps: 5, maxCostUsd: 0.01 }\n", "limits: { timeout: 10m }\n"),
    BASE.replace("limits: { maxSteps: 5, maxCostUsd: 0.01 }\n", ""),
    BASE.replace("priceAs: claude-sonnet-4-5", "priceAs: gpt-4o"),
    BASE.replace("  priceAs: claude-sonnet-4-5\n", ""),
    `# a comment\n${BASE.replace("{ name: ok, run: \"true\" }", "{ run: \"true\", name: ok }")}`,
  ]) {
    const h = hashes(edited);
    assert.equal(h.content, base.content, edited);
    assert.notEqual(h.bytes, base.bytes, edited);
  }
});

test("anything the model or the checks see changes the content hash", () => {
  const base = hashes(BASE).content;
  for (const edited of [
    BASE.replace("Fix it.", "Fix it now."),
    BASE.replace("- say: done", "- say: finished"),
    BASE.replace('run: "true"', 'run: "false"'),
    `${BASE}tags: [nightly]\n`,
    `${BASE}transcript: { budgetTokens: 9000 }\n`,
  ]) assert.notEqual(hashes(edited).content, base, edited);
});

test("the seed and the scripts alternatives (their weights and pick) are in the content hash", () => {
  const ALTERNATIVES = BASE.replace("  script:\n    - say: done\n", "  scripts:\n    - script: [{ say: done }]\n      weight: 3\n    - script: [{ say: other }]\n");
  const base = hashes(`${ALTERNATIVES}seed: 1\n`).content;
  assert.notEqual(hashes(BASE).content, hashes(`${BASE}seed: 1\n`).content);
  for (const edited of [
    `${ALTERNATIVES}seed: 2\n`,
    ALTERNATIVES,
    `${ALTERNATIVES.replace("weight: 3", "weight: 4")}seed: 1\n`,
    `${ALTERNATIVES.replace("say: other", "say: another")}seed: 1\n`,
    `${ALTERNATIVES.replace("  scripts:", "  pick: repeat\n  scripts:")}seed: 1\n`,
  ]) assert.notEqual(hashes(edited).content, base, edited);
});

test("a run directory's scheme picks the hash it compares; a task without a file-bytes hash has one hash", () => {
  assert.equal(hashUnder({ contentHash: "c", fileBytesHash: "b" }, "file-bytes"), "b");
  assert.equal(hashUnder({ contentHash: "c", fileBytesHash: "b" }, "content-v2"), "c");
  assert.equal(hashUnder({ contentHash: "c" }, "file-bytes"), "c");
});

test("canonical JSON sorts keys at every level and drops undefined values", () => {
  assert.equal(canonicalJson({ b: [{ d: 1, c: undefined, a: "x" }], a: null }), '{"a":null,"b":[{"a":"x","d":1}]}');
});

test("a git workspace's source and ref as written are in the content hash (the commit it resolves to is not)", () => {
  const GIT = `${BASE}workspace: { git: https://example.com/r.git, ref: main }\n`;
  const base = hashes(GIT).content;
  assert.notEqual(hashes(BASE).content, base);
  for (const edited of [
    GIT.replace("ref: main", "ref: v1.0"),
    GIT.replace("ref: main", "ref: 0123456789abcdef0123456789abcdef01234567"),
    GIT.replace("https://example.com/r.git", "https://example.com/other.git"),
    GIT.replace("https://example.com/r.git", "../r"),
  ]) assert.notEqual(hashes(edited).content, base, edited);
  assert.equal(hashes(GIT.replace("{ git: https://example.com/r.git, ref: main }", "\n  ref: main\n  git: https://example.com/r.git")).content, base, "key order is no change");
});
