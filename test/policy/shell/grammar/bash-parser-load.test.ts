/**
 * The grammar's load cost in a fresh process: V8 must not spend the seconds after the first
 * parse optimizing tree-sitter's lexer (the first shell call of every process waited 1–5 s).
 * Measured as CPU time, which a loaded machine stretches far less than wall time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { compiled } from "../../../support/paths.js";

const PARSER = compiled("src/policy/shell/grammar/bash-parser.js");

/** CPU ms a fresh process spends from just after its first parses through a 400 ms wait. */
function cpuAfterFirstParseMs(): number {
  const script = `
    const { loadBashParser } = await import(${JSON.stringify(PARSER)});
    const parser = await loadBashParser();
    for (const c of ["npm test", "git diff --stat && npm run build", "cat a | grep b > c"]) parser.parse(c).delete();
    const before = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 400));
    const used = process.cpuUsage(before);
    console.log((used.user + used.system) / 1000);`;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(child.status, 0, child.stderr);
  return Number(child.stdout.trim());
}

test("the first parse in a fresh process leaves no second of grammar compilation behind", () => {
  const cpuMs = cpuAfterFirstParseMs();
  assert.ok(cpuMs < 200, `a fresh process spent ${cpuMs.toFixed(0)} ms of CPU after its first parse (limit 200 ms)`);
});

