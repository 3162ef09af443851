import { test } from "node:test";
import assert from "node:assert/strict";
import {
  MAX_PROJECT_INSTRUCTIONS_BYTES,
  TemplateError,
  capProjectInstructions,
  renderEnvironmentReport,
  renderTemplate,
} from "../../src/prompt/system-prompt.js";

test("renders the environment report from its facts only", () => {
  const facts = { workspace: "/w", platform: "linux 6.1", shell: "bash", date: "2026-11-30", tools: ["read_file", "shell"] };
  assert.equal(renderEnvironmentReport(facts), "# Environment\nWorkspace: /w\nPlatform: linux 6.1\nShell: bash\nDate: 2026-11-30\nTools: read_file, shell");
  assert.equal(renderEnvironmentReport(facts), renderEnvironmentReport({ ...facts }), "same facts, same bytes");
  const withAgents = renderEnvironmentReport({ ...facts, projectInstructions: { file: "AGENTS.md", text: "Use pnpm.\n\n" } });
  assert.ok(withAgents.endsWith("\n\n# Project instructions (AGENTS.md)\nUse pnpm."));
});

test("an unknown placeholder is a template error naming it", () => {
  assert.equal(renderTemplate("a {{ x }} b", { x: "1" }), "a 1 b");
  assert.throws(() => renderTemplate("{{y}}", { x: "1" }), (err: unknown) => err instanceof TemplateError && /\{\{y\}\}/.test((err as Error).message));
});

test("cuts overlong project instructions with a note", () => {
  const text = "é".repeat(MAX_PROJECT_INSTRUCTIONS_BYTES);
  const capped = capProjectInstructions(text);
  assert.ok(Buffer.byteLength(capped) < MAX_PROJECT_INSTRUCTIONS_BYTES + 100);
  assert.match(capped, /cut at 32768 bytes of 65536\]$/);
  assert.ok(!capped.includes("\uFFFD"));
});

test("the environment report names the sandbox and its network, and says nothing of one without it", () => {
  const facts = { workspace: "/w", platform: "linux 6.1", shell: "bash", date: "2026-11-30", tools: ["shell"] };
  const closed = renderEnvironmentReport({ ...facts, sandbox: { network: false } });
  assert.equal(closed, `${renderEnvironmentReport(facts)}\nSandbox: shell commands run in an OS sandbox (bubblewrap): only the workspace is writable and kept; ` +
    "/tmp and $HOME are private and emptied after each command; writes anywhere else fail (read-only file system); " +
    "there is no network (connections fail, 127.0.0.1 included).");
  assert.match(renderEnvironmentReport({ ...facts, sandbox: { network: true } }), /read-only file system\); the network is open\.$/);
  assert.doesNotMatch(renderEnvironmentReport(facts), /Sandbox/);
});
