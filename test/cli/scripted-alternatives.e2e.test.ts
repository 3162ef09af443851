/**
 * A scripted model's `scripts` alternatives through the built CLI: the trial plays the alternative
 * its pick chooses (by repeat, or drawn from the seed and the trial's key), and `validate` and `run`
 * reject a malformed `scripts` alike, located at the field.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { runCli } from "../support/cli.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

/** A task whose two alternatives answer `first` and `second`; its check passes only on `expected`. */
const alternativesTask = (pick: string, expected: string) => `prompt: Say which.
${pick}
model:
  provider: scripted
  scripts:
    - script: [{ say: first }]
    - script: [{ say: second }]
checks:
  - { name: the alternative, run: "grep -qx ${expected} \\"$RHEMA_FINAL_ANSWER\\"" }
`;

test("a trial plays the alternative its pick chooses: by repeat the first; drawn with seed 5 the second", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    // alts/drawn, repeat 1, seed "5": u = 0.81… of two equal weights, the second (test/providers/script-choice pins the draw).
    "alts/drawn.yaml": alternativesTask("seed: 5", "second"),
    "alts/by-repeat.yaml": alternativesTask("seed: 5\n# pick: repeat ignores the seed", "first").replace("  scripts:", "  pick: repeat\n  scripts:"),
  });
  const result = await runCli(["run", "alts", "--out", "out"], { cwd: root });
  assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  assert.match(await readFile(join(root, "out/junit.xml"), "utf8"), /tests="2" failures="0" errors="0"/);
});

test("validate and run reject a malformed scripts alike, located at the field (exit 2)", async (t) => {
  const root = await tempDir(t);
  const cases: [file: string, text: string, expect: RegExp][] = [
    ["zero/t.yaml", alternativesTask("", "first").replace("    - script: [{ say: second }]\n", "    - { script: [{ say: second }], weight: 0 }\n"), /zero\/t\.yaml:7:44: model\.scripts\.1\.weight: weight must be above 0/],
    ["both/t.yaml", alternativesTask("", "first").replace("  scripts:", "  script: [{ say: x }]\n  scripts:"), /both\/t\.yaml:7:5: model\.scripts: script and scripts exclude each other/],
    ["empty/t.yaml", "prompt: x\nmodel:\n  provider: scripted\n  scripts:\n    - script: []\n", /empty\/t\.yaml:5:15: model\.scripts\.0\.script: an alternative's script is empty/],
  ];
  for (const [file, text] of cases) await writeFiles(root, { [file]: text });
  for (const [file, , expect] of cases) {
    const folder = file.split("/")[0]!;
    for (const command of ["validate", "run"]) {
      const result = await runCli(command === "run" ? ["run", folder, "--out", `out-${folder}`] : ["validate", folder], { cwd: root });
      assert.equal(result.code, 2, `${command} ${folder}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, expect, `${command} ${folder}`);
    }
  }
});
