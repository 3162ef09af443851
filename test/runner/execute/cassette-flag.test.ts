/**
 * `--cassette DIR`, `--cassette-mode` and `--cassette-usage` settled before a run (real folders,
 * a real FIFO and device node made in a temp folder): the mode defaults to strict where DIR holds
 * cassettes and record where it holds none or is not there yet; DIR that is a file, a FIFO, a
 * device or a link to nothing is a usage error naming it (never a read that waits); simulated
 * usage is a replay's; the mode and usage flags need DIR.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError } from "../../../src/core/errors.js";
import { settleCassette } from "../../../src/runner/execute/cassette-flag.js";
import { tempDir } from "../../support/temp-dir.js";

const usage = (pattern: RegExp) => (err: unknown) => err instanceof RhemaError && err.code === "usage" && pattern.test(err.message);

test("the mode defaults to strict where the folder holds cassettes, else record; a missing folder is recorded into", async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, "empty"));
  await mkdir(join(dir, "held/suite/id/default"), { recursive: true });
  await writeFile(join(dir, "held/suite/id/default/1.jsonl"), "");
  assert.deepEqual(await settleCassette({ cassette: "held" }, dir), { dir: join(dir, "held"), mode: "strict" });
  assert.deepEqual(await settleCassette({ cassette: "empty" }, dir), { dir: join(dir, "empty"), mode: "record" });
  assert.deepEqual(await settleCassette({ cassette: "not-yet" }, dir), { dir: join(dir, "not-yet"), mode: "record" });
  assert.deepEqual(await settleCassette({ cassette: "held", cassetteMode: "hybrid", cassetteUsage: "simulate" }, dir), { dir: join(dir, "held"), mode: "hybrid", usage: "simulate" });
  await assert.rejects(settleCassette({ cassette: "not-yet", cassetteMode: "strict" }, dir), usage(/no such folder to replay from/));
  assert.equal(await settleCassette({}, dir), null);
});

test("a file, a FIFO, a device or a link to nothing is no cassette folder: a usage error naming it", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "file"), "x");
  assert.equal(spawnSync("mkfifo", [join(dir, "fifo")]).status, 0);
  await symlink(join(dir, "nowhere"), join(dir, "dangling"));
  await assert.rejects(settleCassette({ cassette: "file" }, dir), usage(/--cassette file: a file, not a folder/));
  await assert.rejects(settleCassette({ cassette: "fifo" }, dir), usage(/--cassette fifo: a FIFO, not a folder/));
  await assert.rejects(settleCassette({ cassette: "dangling" }, dir), usage(/--cassette dangling: a link to nothing/));
  // A device node needs CAP_MKNOD: root makes one here (CI is root); an unprivileged run says it skipped it.
  if (spawnSync("mknod", [join(dir, "null"), "c", "1", "3"]).status === 0) {
    await assert.rejects(settleCassette({ cassette: "null" }, dir), usage(/--cassette null: a device, not a folder/));
  } else {
    t.diagnostic("device node case skipped: mknod is not permitted for this user");
  }
});

test("simulated usage is a replay's; the mode and usage flags need --cassette; unknown values are named", async (t) => {
  const dir = await tempDir(t);
  await assert.rejects(settleCassette({ cassette: "new", cassetteUsage: "simulate" }, dir), usage(/--cassette-usage simulate is for a replay/));
  await assert.rejects(settleCassette({ cassetteMode: "strict" }, dir), usage(/--cassette-mode needs --cassette DIR/));
  await assert.rejects(settleCassette({ cassetteUsage: "simulate" }, dir), usage(/--cassette-usage needs --cassette DIR/));
  await assert.rejects(settleCassette({ cassette: "x", cassetteMode: "replay" }, dir), usage(/--cassette-mode to be one of record, strict, hybrid, record-missing, got "replay"/));
  await assert.rejects(settleCassette({ cassette: "x", cassetteUsage: "billed" }, dir), usage(/--cassette-usage to be one of recorded, simulate, got "billed"/));
});
