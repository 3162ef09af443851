/**
 * A disk that fills mid-task (a 1 MB tmpfs; needs root, skipped without it): exit 3 naming the
 * file, and once space is freed the same command continues with nothing lost — every line of
 * every event log parses (a torn line a failed append left is cut off, never kept in the middle),
 * and no temp file of an interrupted atomic write is left in the run directory.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { RunDir, readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { writeFiles } from "../support/suite-files.js";
import { mountTmpfs, tempDir } from "../support/temp-dir.js";

test("after a full disk and a resume once space is freed, every event log line parses, no temp file is left, and the task passes", async (t) => {
  const disk = await mountTmpfs(t, "size=1m");
  if (disk === null) return t.skip("mounting a tmpfs needs root");
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": "version: 1\ndefault: deny\nrules:\n  - allow: { shell: [\"head *\", \"echo *\"] }\n  - allow: { paths: [\"**\"] }\n",
    "suite/fills.yaml": `prompt: Fill the disk.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - call: shell
      input: { command: "head -c 4000000 /dev/zero > fill.bin; echo filled" }
    - call: shell
      input: { command: "echo ${"x".repeat(2000)}" }
    - say: done
checks:
  - { name: answered, run: 'grep -q done "$RHEMA_FINAL_ANSWER"' }
`,
  });
  const out = join(disk, "run");
  const args = ["run", "suite", "--out", out];
  const full = await runCli(args, { cwd: root });
  assert.equal(full.code, 3, full.stderr);
  assert.match(full.stderr, /no space left on device \(ENOSPC\); free some space, then run the same command to continue\n$/);

  const folder = new RunDir(out).trial({ suite: "suite", id: "fills", variant: null, repeat: 1 });
  await rm(join(folder.workspace, "fill.bin"));
  const resumed = await runCli(args, { cwd: root });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual((await readRunResults(out)).map((r) => [r.id, r.status]), [["fills", "passed"]]);
  const log = await readFile(folder.path("events"), "utf8");
  assert.ok(log.endsWith("\n"));
  const types = log.trimEnd().split("\n").map((line) => (JSON.parse(line) as { type: string }).type);
  assert.ok(types.includes("check_end") && types.includes("turn_end"), types.join(","));
  const leftovers = (await readdir(out, { recursive: true })).filter((p) => !p.includes("workspace") && /\.\d+$/.test(p));
  assert.deepEqual(leftovers, [], "no temp file of an interrupted write is left");
});
