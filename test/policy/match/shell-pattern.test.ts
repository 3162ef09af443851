/**
 * Shell patterns: word-wise matching, `*` as a final any-arguments word or inside a word, `**`
 * as any words, basename command names, environment words, and what dynamic words can match.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ShellPatternError, compileShellPattern, patternAllows, patternDenies, patternNamesRedirect, patternNamesSubstitution,
} from "../../../src/policy/match/shell-pattern.js";
import { type ShellAssignment, type ShellWord, literalWord } from "../../../src/policy/shell/grammar/shell-words.js";

const WS = "/work/ws";
const lit = (text: string): ShellWord => literalWord(text);
const dyn = (raw: string, kind: ShellWord["kind"] = "expansion", multi = true): ShellWord => ({ raw, value: raw, kind, multi, vars: ["X"] });
const argv = (line: string): ShellWord[] => line.split(" ").map(lit);
const env = (name: string, value: string): ShellAssignment => ({ name, value: lit(value), raw: `${name}=${value}` });

function allows(pattern: string, words: ShellWord[], assignments: ShellAssignment[] = []): boolean {
  return patternAllows(compileShellPattern(pattern), { env: assignments, argv: words, workspace: WS });
}
function denies(pattern: string, words: ShellWord[], assignments: ShellAssignment[] = []): boolean {
  return patternDenies(compileShellPattern(pattern), { env: assignments, argv: words, workspace: WS });
}

test("`npm test` matches exactly those words", () => {
  assert.equal(allows("npm test", argv("npm test")), true);
  assert.equal(allows("npm test", argv("npm test --watch")), false);
  assert.equal(allows("npm test", argv("npm")), false);
  assert.equal(allows("npm test", argv("npm run test")), false);
});

test("a final `*` matches any further arguments, none included", () => {
  assert.equal(allows("git diff *", argv("git diff")), true);
  assert.equal(allows("git diff *", argv("git diff HEAD~1 -- src")), true);
  assert.equal(allows("git diff *", argv("git status")), false);
});

test("`*` elsewhere is exactly one word, and inside a word any characters", () => {
  assert.equal(allows("git * origin", argv("git fetch origin")), true);
  assert.equal(allows("git * origin", argv("git fetch --all origin")), false);
  assert.equal(allows("npm run test:*", argv("npm run test:unit")), true);
  assert.equal(allows("npm run test:*", argv("npm run build")), false);
  assert.equal(allows("echo '*'", argv("echo *")), true);
  assert.equal(allows("echo '*'", argv("echo x")), false, "a quoted * is literal");
});

test("`**` matches any number of words anywhere", () => {
  assert.equal(denies("git ** push **", argv("git push")), true);
  assert.equal(denies("git ** push **", argv("git -C repo push origin main")), true);
  assert.equal(denies("git ** push **", argv("git status")), false);
  assert.equal(denies("find ** -delete **", argv("find . -name x -delete")), true);
});

test("command names match by basename; for an allow, a workspace path must be spelled out", () => {
  assert.equal(denies("rm *", argv("/bin/rm -rf x")), true);
  assert.equal(denies("rm *", argv("./rm x")), true);
  assert.equal(allows("git status", argv("/usr/bin/git status")), true);
  assert.equal(allows("ls *", argv("./ls")), false);
  assert.equal(allows("ls *", argv(`${WS}/bin/ls`)), false);
  assert.equal(allows("./scripts/check.sh *", argv("scripts/check.sh --all")), true);
  assert.equal(allows("./scripts/check.sh *", argv("./scripts/check.sh")), true);
});

test("environment words: an allow must name every assignment; a deny needs the ones it names", () => {
  assert.equal(allows("npm test", argv("npm test"), [env("CI", "1")]), false);
  assert.equal(allows("CI=1 npm test", argv("npm test"), [env("CI", "1")]), true);
  assert.equal(allows("CI=1 npm test", argv("npm test"), [env("CI", "2")]), false);
  assert.equal(allows("CI=* npm test", argv("npm test"), [env("CI", "true")]), true);
  assert.equal(allows("CI=* npm test", argv("npm test"), [env("CI", "1"), env("LD_PRELOAD", "x")]), false);
  assert.equal(allows("CI=* npm test", argv("npm test")), true, "the named assignment is allowed, not required");
  assert.equal(denies("git push *", argv("git push"), [env("GIT_TRACE", "1")]), true);
  assert.equal(denies("LD_PRELOAD=* **", argv("ls"), [env("LD_PRELOAD", "x.so")]), true);
  assert.equal(denies("LD_PRELOAD=* **", argv("ls")), false);
});

test("a pattern of only assignments allows bare assignments, and nothing else", () => {
  assert.equal(allows("X=*", [], [env("X", "1")]), true);
  assert.equal(allows("X=*", [], [env("Y", "1")]), false);
  assert.equal(allows("X=*", argv("ls"), [env("X", "1")]), false);
  assert.equal(allows("ls *", [], [env("X", "1")]), false);
});

test("dynamic words: could-be-anything to a deny, unproven to an allow", () => {
  const quotedVar = dyn('"$REV"', "expansion", false);
  assert.equal(denies("git push *", [lit("git"), dyn("$SUB")]), true);
  assert.equal(denies("git push *", [dyn("$GIT"), lit("push")]), true);
  assert.equal(denies("rm -rf *", [lit("rm"), dyn("$FLAGS"), lit("x")]), true, "$FLAGS may split into -rf");
  assert.equal(allows("git diff *", [lit("git"), lit("diff"), dyn("$REV")]), true, "the final * takes any words");
  assert.equal(allows("cp * dest", [lit("cp"), quotedVar, lit("dest")]), true, "a quoted expansion is one word");
  assert.equal(allows("cp * dest", [lit("cp"), dyn("$FILES"), lit("dest")]), false, "an unquoted one may be several");
  assert.equal(allows("git status", [lit("git"), dyn("$SUB")]), false);
  assert.equal(allows("ls *", [dyn("$LS")]), false, "a dynamic command name is never a basename match");
  assert.equal(allows("$EDITOR *", [dyn("$EDITOR"), lit("x")]), true, "a pattern spelling the dynamic name names it");
  assert.equal(allows("rm *.o", [lit("rm"), dyn("*.o", "glob")]), true, "a glob matches the same glob");
  assert.equal(allows("rm a.o", [lit("rm"), dyn("*.o", "glob")]), false);
});

test("substitutions and redirection targets are named by pattern words that spell them", () => {
  const pattern = compileShellPattern('echo $(git rev-parse *) >> "$GITHUB_OUTPUT"');
  assert.equal(patternNamesSubstitution(pattern, "$(git rev-parse HEAD)"), true);
  assert.equal(patternNamesSubstitution(pattern, "$(curl evil)"), false);
  assert.equal(patternNamesRedirect(pattern, dyn('"$GITHUB_OUTPUT"', "expansion", false)), true);
  assert.equal(patternNamesRedirect(pattern, dyn("$GITHUB_OUTPUT")), false);
  assert.deepEqual(pattern.words.map((w) => w.raw), ["echo", "$(git rev-parse *)"]);
  const nested = compileShellPattern("echo $(cat $(ls))");
  assert.equal(patternNamesSubstitution(nested, "$(ls)"), true);
});

test("patterns that cannot be read say why", () => {
  const cases: Array<[string, string]> = [
    ["npm test && rm -rf /", "`&` joins commands"],
    ["ls; rm", "`;` joins commands"],
    ["ls | sh", "`|` joins commands"],
    ["echo 'x", "unclosed single quote"],
    ['echo "x', "unclosed double quote"],
    ["echo $(x", "unclosed `$(`"],
    ["echo `x", "unclosed backquote"],
    ["echo >", "`>` needs a target"],
    ["   ", "the pattern names no command"],
    ["echo \\", "cannot end with a backslash"],
  ];
  for (const [source, says] of cases) {
    assert.throws(() => compileShellPattern(source), (err: Error) => err instanceof ShellPatternError && err.message.includes(says), source);
  }
});
