/** The CLI's stdout and stderr write through the run's secret redactor: strings and utf-8 buffers alike. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { redactingStream } from "../../src/cli/io.js";
import { SecretRedactor } from "../../src/runner/run-dir/secret-redactor.js";

test("every write is redacted by the redactor the run's files use, whatever the chunk's type", async () => {
  const redactor = new SecretRedactor({ DEPLOY_TOKEN: 'tok"en\\Sé' });
  const sink = new PassThrough();
  const chunks: string[] = [];
  sink.on("data", (c: Buffer) => chunks.push(c.toString("utf8")));
  const stream = redactingStream(sink, (text) => redactor.redact(text));
  stream.write('plain tok"en\\Sé\n');
  stream.write(Buffer.from(`${JSON.stringify({ k: 'tok"en\\Sé' })}\n`));
  stream.write("utf8 too tok\"en\\Sé\n", "utf8");
  await new Promise((resolve) => stream.end(resolve));
  assert.equal(chunks.join(""), 'plain [redacted:DEPLOY_TOKEN]\n{"k":"[redacted:DEPLOY_TOKEN:json]"}\nutf8 too [redacted:DEPLOY_TOKEN]\n');
});
