/**
 * The in-repository replay corpus (bench/corpus/scripted) is what its generator makes today:
 * the scripted suite runs through the built `rhema` again and every file comes out byte for
 * byte as committed — the corpus is deterministic, and current with the runner that made it.
 */
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { makeCorpus } from "../../bench/make-corpus.js";
import { corpusDir } from "../support/paths.js";
import { tempDir } from "../support/temp-dir.js";

test("bench/corpus/scripted is what `npm run bench:corpus` makes, byte for byte", async (t) => {
  const out = join(await tempDir(t), "corpus");
  await makeCorpus(out);
  const made = (await readdir(out)).sort();
  const committed = (await readdir(corpusDir)).filter((f) => f.endsWith(".jsonl") || f.endsWith(".times.json")).sort();
  assert.deepEqual(made, committed, "the same files");
  for (const f of made) {
    assert.equal(await readFile(join(out, f), "utf8"), await readFile(join(corpusDir, f), "utf8"), `${f} differs: run \`npm run build && npm run bench:corpus\` and commit the result`);
  }
});
