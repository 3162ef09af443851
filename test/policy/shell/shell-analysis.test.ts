/**
 * The analysis: every simple command a line runs, across every construct; files written and
 * read with the command they belong to; substitutions; the directories `cd` may reach; and
 * blockers or syntax errors for what cannot be judged.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadBashParser } from "../../../src/policy/shell/grammar/bash-parser.js";
import { type ShellAnalysis, analyzeShell } from "../../../src/policy/shell/shell-analysis.js";

async function analyze(source: string): Promise<ShellAnalysis> {
  return analyzeShell(source, await loadBashParser());
}

/** Each command as the words that run, after wrappers. */
async function commands(source: string): Promise<string[]> {
  return (await analyze(source)).commands.map((c) => c.argv.map((w) => w.value).join(" "));
}

test("commands are split across && || ; | |& & and newlines", async () => {
  assert.deepEqual(await commands("a && b || c; d | e |& f & g\nh"), ["a", "b", "c", "d", "e", "f", "g", "h"]);
});

test("subshells, brace groups, if/for/while/case bodies and functions are walked", async () => {
  assert.deepEqual(await commands("(a; { b; }); if c; then d; elif e; then f; else g; fi"), ["a", "b", "c", "d", "e", "f", "g"]);
  assert.deepEqual(await commands("for i in 1 2; do a $i; done; while b; do c; done; until d; do e; done"), ["a $i", "b", "c", "d", "e"]);
  assert.deepEqual(await commands("case $x in y) a;; *) b;; esac; f() { c; }; function g { d; }; ! e"), ["a", "b", "c", "d", "e"]);
  assert.deepEqual(await commands("for ((i=0; i<3; i++)); do a; done; [[ -f x ]] && b; (( n++ ))"), ["a", "b"]);
});

test("substitutions are recorded, and the commands inside them walked", async () => {
  const result = await analyze('echo "$(a)" `b` <(c) >(d) ${x:-$(e)}; x=$(f)');
  assert.deepEqual(result.constructs.map((k) => `${k.kind} ${k.text}`), [
    "command_substitution $(a)", "command_substitution `b`", "process_substitution <(c)", "process_substitution >(d)",
    "command_substitution $(e)", "command_substitution $(f)",
  ]);
  assert.deepEqual(result.commands.map((c) => c.argv.map((w) => w.value).join(" ")).sort(), ['echo $(a) `b` <(c) >(d) ${x:-$(e)}', "", "a", "b", "c", "d", "e", "f"].sort());
});

test("heredocs: an unquoted body's substitutions run, and the rest of the line is walked", async () => {
  const result = await analyze("cat <<EOF | sh > out\n$(a)\nEOF\n");
  assert.deepEqual(result.commands.map((c) => c.argv.map((w) => w.value).join(" ")), ["cat", "sh", "a"]);
  assert.deepEqual(result.files.map((f) => [f.access, f.target.value, f.owner]), [["write", "out", 1]]);
  assert.deepEqual((await analyze("cat <<'EOF'\n$(a)\nEOF\n")).constructs, []);
  // A backquoted command in a body leaves no node in the grammar's tree; bash runs it.
  assert.deepEqual((await analyze("cat <<EOF\n`b` ${x:=`c`}\nEOF\n")).commands.map((c) => c.argv.map((w) => w.value).join(" ")), ["cat", "b", "c"]);
});

test("redirections and tee are file accesses owned by their command; fd duplications are not", async () => {
  const result = await analyze("a > w1 2>&1 >> w2 &> w3 >| w4 < r1 >& w5 <&0 >&-; { b; } > w6; c | tee -a w7 w8");
  assert.deepEqual(result.files.map((f) => `${f.access} ${f.target.value} ${f.owner}`), [
    "write w1 0", "write w2 0", "write w3 0", "write w4 0", "read r1 0", "write w5 0", "write w6 null", "write w7 3", "write w8 3",
  ]);
});

test("bash -c and eval strings are parsed as scripts", async () => {
  assert.deepEqual(await commands("bash -c 'a; b | c' && eval 'd && e'"), ["", "a", "b", "c", "", "d", "e"]);
  const nested = await analyze("sh -c \"sh -c 'sh -c \\\"sh -c a\\\"'\"");
  assert.deepEqual(nested.blockers, []);
});

test("cd targets are followed: a command runs where the cds before it may have left the shell", async () => {
  const cwds = async (source: string): Promise<Array<[string, string[], boolean]>> =>
    (await analyze(source)).commands.map((c) => [c.argv.map((w) => w.value).join(" "), [...c.cwd.dirs], c.cwd.unknown]);
  assert.deepEqual(await cwds("cd src && cd lib; ls"), [["cd src", ["."], false], ["cd lib", ["src"], false], ["ls", ["src/lib", ".", "src"], false]]);
  assert.deepEqual(await cwds("cd test && ls"), [["cd test", ["."], false], ["ls", ["test"], false]]);
  assert.deepEqual(await cwds("cd test || ls"), [["cd test", ["."], false], ["ls", ["."], false]]);
  assert.deepEqual(await cwds("(cd test); ls"), [["cd test", ["."], false], ["ls", ["."], false]]);
  assert.deepEqual(await cwds("cd test | cat; ls"), [["cd test", ["."], false], ["cat", ["."], false], ["ls", ["."], false]]);
  for (const source of ["cd $D; ls", "cd -; ls", "cd; ls", "cd ~/x; ls", "pushd src; ls", "popd; ls", "source x.sh; ls"]) {
    assert.equal((await analyze(source)).commands.at(-1)!.cwd.unknown, true, source);
  }
  assert.equal((await analyze("env -C /tmp ls")).commands[0]!.cwd.dirs[0], "/tmp");
  // A loop body that changes directory runs again from where it left off: anywhere.
  assert.equal((await analyze("for i in 1 2; do cd x; ls; done")).commands[1]!.cwd.unknown, true);
  // A function body runs wherever it is called.
  assert.deepEqual((await analyze("f() { ls; }; cd src && f")).commands[0]!.cwd.dirs, [".", "src"]);
});

test("assignments: a bare one is a command of only environment; declarations are commands", async () => {
  const bare = await analyze("A=1 B=$x");
  assert.deepEqual(bare.commands.map((c) => [c.env.map((a) => a.raw), c.argv.length]), [[["A=1", "B=$x"], 0]]);
  assert.deepEqual(await commands("export A=1 B; local c; unset d"), ["export A=1 B", "local c", "unset d"]);
  const prefixed = await analyze("CI=1 npm test");
  assert.deepEqual(prefixed.commands[0]!.env.map((a) => [a.name, a.value.value]), [["CI", "1"]]);
});

test("unparseable input reports where the grammar failed", async () => {
  assert.equal((await analyze("{rm,-rf,/}")).syntaxError, "the shell grammar cannot parse `{rm,-rf,/}` at line 1, column 1");
  assert.equal((await analyze("if ls; then")).syntaxError, "the shell grammar cannot parse a missing `fi` at line 1, column 12");
  assert.match((await analyze("bash -c 'ls ('")).syntaxError ?? "", /in the script `ls \(`/);
  assert.equal((await analyze("ls")).syntaxError, null);
});

test("what nests too deeply to analyse is a blocker, not a crash", async () => {
  const deep = `${"( ".repeat(300)}ls${" )".repeat(300)}`;
  const result = await analyze(deep);
  assert.ok(result.syntaxError !== null || result.blockers.includes("the command nests too deeply to analyse"), JSON.stringify(result.blockers));
  let script = "rm x";
  for (let i = 0; i < 6; i++) script = `eval '${script.replaceAll("'", "'\\''")}'`;
  const scripts = await analyze(script);
  assert.ok(scripts.blockers.includes("scripts nest too deeply (`bash -c` / `eval` inside each other) to analyse"), JSON.stringify(scripts.blockers));
});
