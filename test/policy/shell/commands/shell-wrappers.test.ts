/** Seeing through wrappers to the command that runs, strictly: unknown options block. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ShellWord, literalWord } from "../../../../src/policy/shell/grammar/shell-words.js";
import { findExecCommands } from "../../../../src/policy/shell/commands/shell-programs.js";
import { commandName, unwrapCommand } from "../../../../src/policy/shell/commands/shell-wrappers.js";

const argv = (line: string): ShellWord[] => line.split(" ").map(literalWord);
const text = (words: readonly ShellWord[]): string => words.map((w) => w.raw).join(" ");

function unwrap(line: string) {
  const result = unwrapCommand(argv(line));
  return {
    argv: text(result.argv),
    layers: result.layers.map(text),
    guarded: result.guarded.map(text),
    env: result.env.map((a) => a.raw),
    scripts: result.scripts.map((s) => s.text),
    nested: result.nested.map(text),
    blocker: result.blocker,
  };
}

test("transparent wrappers give the command they run, with every layer kept for deny rules", () => {
  const cases: Array<[string, string]> = [
    ["env rm x", "rm x"], ["env -i -u HOME rm x", "rm x"], ["command rm x", "rm x"], ["builtin cd x", "cd x"],
    ["exec -a name rm x", "rm x"], ["nohup rm x", "rm x"], ["time -p rm x", "rm x"], ["timeout 5 rm x", "rm x"],
    ["timeout -s KILL -k 2 5s rm x", "rm x"], ["timeout --signal=TERM --preserve-status 5 rm x", "rm x"],
    ["nice rm x", "rm x"], ["nice -n 5 rm x", "rm x"], ["nice -10 rm x", "rm x"], ["nice --adjustment=3 rm x", "rm x"],
    ["stdbuf -oL -e0 rm x", "rm x"], ["setsid -w rm x", "rm x"], ["env -- rm x", "rm x"],
    ["nohup env timeout 5 nice -n 1 rm x", "rm x"], ["/usr/bin/env rm x", "rm x"],
  ];
  for (const [line, inner] of cases) assert.equal(unwrap(line).argv, inner, line);
  assert.deepEqual(unwrap("nohup timeout 5 rm x").layers, ["nohup timeout 5 rm x", "timeout 5 rm x", "rm x"]);
});

test("env assignments become the command's environment", () => {
  assert.deepEqual(unwrap("env CI=1 NODE_ENV=test npm test"), {
    argv: "npm test", layers: ["env CI=1 NODE_ENV=test npm test", "npm test"], guarded: [], env: ["CI=1", "NODE_ENV=test"],
    scripts: [], nested: [], blocker: null,
  });
});

test("sudo and doas are seen through, and must be allowed themselves", () => {
  const sudo = unwrap("sudo -u root -E rm x");
  assert.equal(sudo.argv, "rm x");
  assert.deepEqual(sudo.guarded, ["sudo -u root -E rm x"]);
  assert.deepEqual(unwrap("doas -u root ls").guarded, ["doas -u root ls"]);
  assert.equal(unwrap("sudo -s rm x").argv, "rm x");
  assert.match(unwrap("sudo -Z rm x").blocker ?? "", /unknown option `-Z`/);
});

test("xargs runs its command with input words appended (or replacing -I's string)", () => {
  const plain = unwrapCommand(argv("xargs -0 -n 1 rm -f"));
  assert.equal(text(plain.argv), "rm -f <xargs input>");
  assert.equal(plain.argv.at(-1)!.multi, true);
  assert.equal(text(unwrapCommand(argv("xargs")).argv), "echo <xargs input>");
  const replaced = unwrapCommand(argv("xargs -I {} cp {} dest"));
  assert.deepEqual(replaced.argv.map((w) => w.kind), ["literal", "expansion", "literal"]);
});

test("bash -c and eval of a literal string hand back a script; of anything else they stay as written", () => {
  assert.deepEqual(unwrap("bash -c ls").scripts, ["ls"]);
  assert.deepEqual(unwrapCommand([literalWord("sh"), literalWord("-ec"), literalWord("rm x; ls")]).scripts, [{ text: "rm x; ls", here: false }]);
  assert.deepEqual(unwrap("bash -o pipefail --norc -c ls").scripts, ["ls"]);
  assert.deepEqual(unwrap("eval git status").scripts, ["git status"]);
  assert.equal(unwrap("bash -c ls").argv, "");
  const dynamic = unwrapCommand([literalWord("bash"), literalWord("-c"), { raw: '"$CMD"', value: "$CMD", kind: "expansion", multi: false, vars: ["CMD"] }]);
  assert.deepEqual(dynamic.scripts, []);
  assert.equal(text(dynamic.argv), 'bash -c "$CMD"');
  assert.equal(unwrap("bash script.sh").argv, "bash script.sh");
});

test("find -exec bodies are commands of their own, {} standing for what find finds", () => {
  const found = findExecCommands(argv("find . -name x -exec rm -f {} ; -execdir cat {} +"));
  assert.deepEqual(found.commands.map(text), ["rm -f {}", "cat {}"]);
  assert.equal(found.commands[0]![2]!.kind, "expansion");
  assert.match(findExecCommands(argv("find . -exec rm")).blocker ?? "", /no terminating/);
  assert.deepEqual(unwrap("find . -exec rm {} ;").nested, ["rm {}"]);
});

test("unknown options and dynamic words where the command should start block the analysis", () => {
  assert.match(unwrap("xargs --weird rm").blocker ?? "", /cannot see through `xargs`: unknown option `--weird`/);
  assert.match(unwrap("timeout --bogus 5 ls").blocker ?? "", /unknown option/);
  assert.match(unwrapCommand([literalWord("env"), literalWord("-S"), literalWord("rm $X")]).blocker ?? "", /env -S/);
  const dynamicOption = unwrapCommand([literalWord("env"), { raw: "$X", value: "$X", kind: "expansion", multi: true, vars: ["X"] }, literalWord("ls")]);
  assert.match(dynamicOption.blocker ?? "", /could be an option or an operand/);
});

test("command -v only looks a name up; a wrapper with nothing to run runs nothing", () => {
  assert.equal(unwrap("command -v rm").argv, "command -v rm");
  assert.equal(unwrap("exec").argv, "");
  assert.equal(commandName(literalWord("/usr/bin/git")), "git");
  assert.equal(commandName({ raw: "$X", value: "$X", kind: "expansion", multi: true, vars: ["X"] }), null);
});
