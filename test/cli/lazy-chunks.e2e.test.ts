/**
 * The bundle's chunks (scripts/build-cli.mjs: the SDKs, the price table, the charts, the
 * tokenizers) load only when a run uses them, through the `rhema` executable: a preload records
 * every chunk file read. The scripted example suite reads none; an Anthropic task reads the
 * Anthropic SDK's and the price table's and no other provider's or MCP's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { cliEnv, runCli } from "../support/cli.js";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { repoRoot } from "../support/paths.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

/** Preloaded into the CLI: appends the name of each chunk file read to $CHUNKS_READ at exit. */
const SPY = `const fs = require("node:fs");
const read = fs.readFileSync;
const seen = new Set();
fs.readFileSync = function (path, ...rest) {
  if (typeof path === "string" && /[\\\\/]chunks[\\\\/]/.test(path)) seen.add(path.replace(/^.*[\\\\/]chunks[\\\\/]/, ""));
  return read.call(this, path, ...rest);
};
process.on("exit", () => fs.appendFileSync(process.env.CHUNKS_READ, [...seen].map((name) => name + "\\n").join("")));
`;

async function chunksRead(root: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<string[]> {
  const spy = join(root, "chunk-spy.cjs");
  const record = join(root, `chunks-${Math.random().toString(36).slice(2)}.txt`);
  await writeFile(spy, SPY);
  await writeFile(record, "");
  await runCli(args, { cwd, env: cliEnv({ ...env, NODE_OPTIONS: `--require ${spy}`, CHUNKS_READ: record, RHEMA_COMPILE_CACHE: "off" }) });
  return (await readFile(record, "utf8")).split("\n").filter(Boolean).sort();
}

test("the scripted example suite reads no chunk; an Anthropic task reads the Anthropic SDK's and the price table's, no other", async (t) => {
  const root = await tempDir(t);
  assert.deepEqual(await chunksRead(root, ["run", join(repoRoot, "tasks"), "--out", join(root, "example")], repoRoot), []);

  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "Hello." }] });
  await writeFiles(root, { "suite/hi.yaml": "prompt: Say hello.\nmodel: { provider: anthropic, name: claude-sonnet-4-5 }\n" });
  const read = await chunksRead(root, ["run", "suite", "--out", join(root, "anthropic"), "--sandbox", "off"], root, { ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: server.baseUrl });
  assert.equal(server.requests.length, 1, "the task ran");
  assert.deepEqual(read, ["anthropic-sdk.cjs", "genai-prices.cjs"]);
});
