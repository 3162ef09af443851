/**
 * `rhema run --json | head -1`: a reader that goes away ends output quietly; the run goes on,
 * writes its reports, releases its lock and exits with its own code — no EPIPE stack.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { startCli } from "../support/cli.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const TASK = (n: number) => `prompt: say ${n}
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - call: shell
      input: { command: "echo ${n}" }
    - say: said ${n}
checks:
  - { name: ok, run: "true" }
`;

test("a stdout closed after the first JSON line ends output quietly and the run still writes its reports", async (t) => {
  const dir = await tempDir(t);
  await writeFiles(dir, { "policy.yaml": OPEN_POLICY, "suite/a.yaml": TASK(1), "suite/b.yaml": TASK(2), "suite/c.yaml": TASK(3) });
  const { child, done } = startCli(["run", "suite", "--json", "--out", "out", "--concurrency", "1"], { cwd: dir });
  child.stdout!.once("data", () => child.stdout!.destroy());
  const result = await done;
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /EPIPE|at .*\.js:\d+/);
  for (const report of ["junit.xml", "stats.json", "summary.md"]) assert.ok(existsSync(join(dir, "out", report)), report);
  assert.deepEqual(readdirSync(join(dir, "out")).filter((f) => f.includes("lock")), []);
});
