/** Shell words: quote removal, ANSI-C decoding, and what is known about a word before it runs. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadBashParser } from "../../../../src/policy/shell/grammar/bash-parser.js";
import { type ShellWord, decodeAnsiC, readWord } from "../../../../src/policy/shell/grammar/shell-words.js";

/** Reads the first argument of `x WORD` with the real grammar. */
async function word(source: string): Promise<Omit<ShellWord, "raw" | "vars">> {
  const parser = await loadBashParser();
  const tree = parser.parse(`x ${source}`);
  try {
    const command = tree.rootNode.firstNamedChild!;
    const argument = command.childrenForFieldName("argument")[0]!;
    const { raw: _raw, vars: _vars, ...rest } = readWord(argument);
    return rest;
  } finally {
    tree.delete();
  }
}

test("quotes and escapes are removed: \"r\"\"m\", r\\m, 'rm', $'rm' are all rm", async () => {
  for (const source of ['"r""m"', "r\\m", "'rm'", "$'rm'", "r''m", '"rm"', "$'\\x72m'", "$'\\162m'"]) {
    assert.deepEqual(await word(source), { value: "rm", kind: "literal", multi: false }, source);
  }
});

test("double quotes keep backslashes except before $ ` \" \\", async () => {
  assert.deepEqual(await word('"a\\$b\\n"'), { value: "a$b\\n", kind: "literal", multi: false });
  assert.deepEqual(await word("a\\ b"), { value: "a b", kind: "literal", multi: false });
});

test("unquoted globs and braces may become several words; quoted ones are literal", async () => {
  assert.deepEqual(await word("*.ts"), { value: "*.ts", kind: "glob", multi: true });
  assert.deepEqual(await word("{a,b}"), { value: "{a,b}", kind: "glob", multi: true });
  assert.deepEqual(await word("{1..3}"), { value: "{1..3}", kind: "glob", multi: true });
  assert.deepEqual(await word("'*.ts'"), { value: "*.ts", kind: "literal", multi: false });
  assert.deepEqual(await word("\\*.ts"), { value: "*.ts", kind: "literal", multi: false });
  assert.deepEqual(await word("{a}"), { value: "{a}", kind: "literal", multi: false });
});

test("expansions and substitutions are dynamic; quoting makes them one word", async () => {
  assert.deepEqual(await word("$HOME"), { value: "$HOME", kind: "expansion", multi: true });
  assert.deepEqual(await word('"$HOME"'), { value: "$HOME", kind: "expansion", multi: false });
  assert.deepEqual(await word("a$HOME"), { value: "a$HOME", kind: "expansion", multi: true });
  assert.deepEqual(await word("$(date)"), { value: "$(date)", kind: "substitution", multi: true });
  assert.deepEqual(await word('"x$(date)"'), { value: "x$(date)", kind: "substitution", multi: false });
  assert.deepEqual(await word("${x:-$(date)}"), { value: "${x:-$(date)}", kind: "substitution", multi: true });
  assert.deepEqual(await word("<(ls)"), { value: "<(ls)", kind: "substitution", multi: false });
  assert.deepEqual(await word("$((1 + 2))"), { value: "$((1 + 2))", kind: "expansion", multi: true });
});

test("ANSI-C strings decode every escape bash knows", () => {
  assert.equal(decodeAnsiC("\\x72\\x6d"), "rm");
  assert.equal(decodeAnsiC("\\162\\155"), "rm");
  assert.equal(decodeAnsiC("\\u0072m"), "rm");
  assert.equal(decodeAnsiC("\\U0001F600"), "😀");
  assert.equal(decodeAnsiC("a\\tb\\nc\\\\d\\'e"), "a\tb\nc\\d'e");
  assert.equal(decodeAnsiC("\\cA"), "\x01");
  assert.equal(decodeAnsiC("\\q"), "\\q");
});
