/**
 * `rhema policy check` through the built CLI on the two classes issue 19 found the held-out
 * corpus getting through: text bash parses again (a compound array assignment in a declaration's
 * string operand, whose subscripts and words run command substitutions), shown first to run the
 * command under real bash; and an option that follows an operand's links (`ls -L dir`), judged
 * by where the links of a real workspace lead.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/temp-dir.js";

const DENY_LIST = `version: 1
default: allow
rules:
  - deny: { shell: ["rm *"], reason: no deleting }
`;

const ALLOW_LIST = `version: 1
default: deny
rules:
  - allow: { shell: ["ls *", "stat *", "du *"], paths: ["**"] }
`;

async function check(dir: string, policy: string, command: string, workspace: string): Promise<{ code: number | null; decision: { decision: string; rule: string; reason: string } }> {
  await writeFile(join(dir, "policy.yaml"), policy);
  const result = await runCli(
    ["policy", "check", "--policy", join(dir, "policy.yaml"), "--tool", "shell", "--input", JSON.stringify({ command }), "--workspace", workspace, "--json"],
    { cwd: dir },
  );
  // A deny list gets its permissive warning on stderr; nothing else may be there.
  assert.doesNotMatch(result.stderr.replace(/^warning: default \(policy\.yaml\):.*\n/m, ""), /\S/);
  return { code: result.code, decision: JSON.parse(result.stdout) as { decision: string; rule: string; reason: string } };
}

test("a compound array assignment in a quoted declare operand runs its command substitution in bash, and policy check denies it", async (t) => {
  const dir = await tempDir(t);
  const ws = join(dir, "ws");
  await mkdir(ws);
  const command = "declare -a 'x=([$(rm -f victim)]=1)'";
  // The grammar sees one plain string; bash parses it again and runs `rm`.
  await writeFile(join(ws, "victim"), "x");
  execFileSync("bash", ["-c", command], { cwd: ws, stdio: "ignore" });
  assert.equal(existsSync(join(ws, "victim")), false, "bash ran the substitution inside the subscript");

  const denied = await check(dir, DENY_LIST, command, ws);
  assert.equal(denied.code, 1);
  assert.equal(denied.decision.decision, "deny");
  assert.match(denied.decision.rule, /shell analysis/);
  assert.match(denied.decision.reason, /\[\$\(rm -f victim\)\]=1/);

  // The command inside a reparsed value is judged like any other: the deny rule names it.
  const plain = await check(dir, DENY_LIST, "local -a \"x=(\\$(rm -f victim))\"", ws);
  assert.deepEqual({ code: plain.code, rule: plain.decision.rule, reason: plain.decision.reason }, { code: 1, rule: "rule 1 (policy.yaml:4)", reason: "no deleting" });

  const benign = await check(dir, DENY_LIST, "declare -a x=(1 2) && echo ${x[1]}", ws);
  assert.equal(benign.code, 0, benign.decision.reason);
});

test("ls -L on a folder whose link leads out is denied by where the link leads; a link that stays inside is allowed", async (t) => {
  const dir = await tempDir(t);
  const ws = join(dir, "ws");
  const outside = join(dir, "outside");
  await mkdir(join(ws, "src"), { recursive: true });
  await mkdir(join(ws, "lib"), { recursive: true });
  await mkdir(outside);
  await writeFile(join(outside, "secret"), "s3cret\n");
  await writeFile(join(ws, "lib", "a.ts"), "export {};\n");
  await symlink(join(outside, "secret"), join(ws, "src", "leak"));
  await symlink(join("..", "lib", "a.ts"), join(ws, "src", "a.ts"));

  // ls -L stats what the entry's link leads to: the file outside the workspace.
  const listed = execFileSync("ls", ["-lL", "src"], { cwd: ws, encoding: "utf8" });
  assert.match(listed, /-rw\S* +1 .* 7 .* leak/, listed);

  const out = await check(dir, ALLOW_LIST, "ls -L src", ws);
  assert.equal(out.code, 1);
  assert.deepEqual({ decision: out.decision.decision, rule: out.decision.rule }, { decision: "deny", rule: "workspace boundary" });
  assert.match(out.decision.reason, /follows a link out of the workspace/);

  const plainList = await check(dir, ALLOW_LIST, "ls src", ws);
  assert.equal(plainList.code, 0, plainList.decision.reason);

  const inside = join(dir, "ws2");
  await mkdir(join(inside, "src"), { recursive: true });
  await mkdir(join(inside, "lib"));
  await writeFile(join(inside, "lib", "a.ts"), "export {};\n");
  await symlink(join("..", "lib", "a.ts"), join(inside, "src", "a.ts"));
  const kept = await check(dir, ALLOW_LIST, "ls -L src", inside);
  assert.equal(kept.code, 0, kept.decision.reason);
  assert.equal(kept.decision.decision, "allow");
});
