/** Line continuations are joined the way bash joins them, and kept where bash keeps them. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadBashParser } from "../../../../src/policy/shell/grammar/bash-parser.js";
import { joinContinuedLines } from "../../../../src/policy/shell/grammar/line-continuations.js";

async function join(source: string): Promise<string | null> {
  return joinContinuedLines(source, await loadBashParser());
}

test("backslash-newline is removed in words, double quotes and unquoted heredoc bodies", async () => {
  assert.equal(await join("r\\\nm x"), "rm x");
  assert.equal(await join('echo "$\\\n(date)"'), 'echo "$(date)"');
  assert.equal(await join("cat <<EOF\n$\\\n(date)\nEOF\n"), "cat <<EOF\n$(date)\nEOF\n");
  assert.equal(await join("ls \\\n  -la"), "ls   -la");
});

test("it is kept in single quotes, $'…', comments and quoted heredoc bodies", async () => {
  for (const source of ["echo 'a\\\nb'", "echo $'a\\\nb'", "# note \\\nls", "cat <<'EOF'\n$\\\n(date)\nEOF\n", "cat <<\\EOF\na\\\nb\nEOF\n"]) {
    assert.equal(await join(source), source, source);
  }
});

test("an escaped backslash before a newline is not a continuation, and sources without one are untouched", async () => {
  assert.equal(await join("echo a\\\\\nls"), "echo a\\\\\nls");
  const plain = "git status && ls";
  assert.equal(await join(plain), plain);
});
