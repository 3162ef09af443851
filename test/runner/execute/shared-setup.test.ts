/**
 * A shared setup's key (shared-setup.ts): what the setup saw — the fixture's stamp (path, size,
 * mtime, mode; not bytes), the commands, the allowed and matrix variables with their values, the
 * sandbox and network — each changes the prepared base's hash; a secret value let through is
 * never written into the key. Real temp folders.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SharedSetups, preparedHash, type SharedSetupRequest } from "../../../src/runner/execute/shared-setup.js";
import { fixtureStamp } from "../../../src/runner/tasks/fixture-stamp.js";
import { loadTaskFile } from "../../../src/runner/tasks/task-file.js";
import { processCommandRunner } from "../../../src/runner/execute/command-runner.js";
import { writeFiles } from "../../support/suite-files.js";
import { tempDir } from "../../support/temp-dir.js";

const SECRET = "s3cr3t-value-never-written";

async function request(t: { after(fn: () => unknown): void }) {
  const root = await tempDir(t);
  await writeFiles(root, {
    "fixture/a.txt": "one\n",
    "suite/job.yaml": "prompt: do it\nworkspace: { from: ../fixture, setup: [\"npm ci\"], shared: true }\n",
  });
  const task = await loadTaskFile(join(root, "suite/job.yaml"));
  const base: SharedSetupRequest = {
    task, runCommand: processCommandRunner({ baseEnv: {} }),
    commands: { env: { PATH: "/usr/bin", NPM_TOKEN: SECRET, OTHER: "x" }, allowEnv: ["NPM_TOKEN"] },
    sandbox: { mode: "bwrap", network: "deny", placement: null },
  };
  const setups = new SharedSetups(join(root, "run"), { now: () => new Date(0), signal: new AbortController().signal, retryFailed: false, pid: 1, redact: (text: string) => text });
  // A fresh registry per key: the fixture is stamped once per run.
  const hashOf = async (r: SharedSetupRequest) => preparedHash(await new SharedSetups(join(root, "run"), { now: () => new Date(0), signal: new AbortController().signal, retryFailed: false, pid: 1, redact: (text: string) => text }).keyOf(r));
  return { root, task, base, setups, hashOf };
}

test("the key holds the fixture's stamp, the commands, the allowed variables hashed, the sandbox and network", async (t) => {
  const { root, base, setups } = await request(t);
  const key = await setups.keyOf(base);
  assert.deepEqual({ ...key, env: Object.keys(key.env) }, {
    from: join(root, "fixture"), fixtureStamp: await fixtureStamp(join(root, "fixture")), setup: ["npm ci"], env: ["NPM_TOKEN"], sandbox: "bwrap", network: "deny",
  });
  assert.match(key.env.NPM_TOKEN!, /^sha256:[0-9a-f]{16}$/);
  assert.ok(!JSON.stringify(key).includes(SECRET), "a secret's value is never in the key");
  assert.match(preparedHash(key), /^[0-9a-f]{24}$/);
});

test("each thing the setup saw changes the hash; an unallowed variable does not", async (t) => {
  const { root, task, base, hashOf } = await request(t);
  const before = await hashOf(base);
  assert.equal(await hashOf({ ...base, commands: { ...base.commands, env: { ...base.commands.env, OTHER: "y" } } }), before, "a variable not let through is not seen");
  const changed = {
    "an allowed value": { ...base, commands: { ...base.commands, env: { ...base.commands.env, NPM_TOKEN: "other" } } },
    "the matrix env": { ...base, task: { ...task, env: { NODE_ENV: "test" } } },
    "the commands": { ...base, task: { ...task, workspace: { ...task.workspace, setup: ["npm ci --omit=dev"] } } },
    "the sandbox": { ...base, sandbox: { ...base.sandbox, mode: "off" } },
    "the network": { ...base, sandbox: { ...base.sandbox, network: "allow" } },
  };
  for (const [what, r] of Object.entries(changed)) assert.notEqual(await hashOf(r), before, what);

  const file = join(root, "fixture/a.txt");
  await utimes(file, new Date("2020-01-01"), new Date("2020-01-01"));
  const touched = await hashOf(base);
  assert.notEqual(touched, before, "a file's mtime");
  await chmod(file, 0o755);
  const moded = await hashOf(base);
  assert.notEqual(moded, touched, "a file's mode");
  // Same size, same mtime, other bytes: not seen (the stamp reads no file).
  await writeFile(file, "two\n");
  await utimes(file, new Date("2020-01-01"), new Date("2020-01-01"));
  assert.equal(await hashOf(base), moded, "bytes are not read");
  await writeFiles(root, { "fixture/new.txt": "" });
  assert.notEqual(await hashOf(base), moded, "a new entry");
});
