/**
 * What the end-to-end tests of a model provider check the same way after a recorded run
 * (`--cassette`): the trial's assistant messages as a resume reads them (checkpoint snapshot and
 * journal), and the one cassette the run wrote — its provider, the key in none of it, every line
 * valid against schema/cassette.schema.json.
 */
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { parseCassette } from "../../src/store/cassette-file.js";
import { CheckpointStore } from "../../src/store/checkpoint-store.js";
import { cliEnv } from "./cli.js";
import { assertValid, publishedSchemas } from "./published-schemas.js";

/** The model's messages of the run's one trial `suite/write`. */
export async function assistantMessages(out: string): Promise<unknown> {
  const session = await new CheckpointStore(join(out, "tasks/suite/write/default/1")).load();
  return session!.messages.filter((m) => m.role === "assistant");
}

/** The CLI's environment with no provider key or base URL: a strict replay needs none. */
export function offlineEnv(): Record<string, string> {
  const env = cliEnv();
  for (const name of Object.keys(env)) if (/^(GEMINI_|GOOGLE_|OPENAI_|ANTHROPIC_|AWS_|CLOUD_ML_)/.test(name)) delete env[name];
  return env;
}

/** Asserts `cassettes` holds one cassette, recorded from `provider`, without `key`, each line valid against its published schema. */
export async function assertOneCassette(cassettes: string, provider: string, key: string): Promise<void> {
  const files = (await readdir(cassettes, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  assert.equal(files.length, 1, files.join("\n"));
  const text = await readFile(files[0]!, "utf8");
  assert.equal(parseCassette(files[0]!, text).header.provider, provider);
  assert.ok(!text.includes(key), "the key is in no cassette");
  const validate = publishedSchemas().validator("cassette.schema.json");
  for (const [n, line] of text.trim().split("\n").entries()) assertValid(validate, JSON.parse(line), `${files[0]}:${n + 1}`);
}
