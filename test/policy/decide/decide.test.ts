/**
 * The pure decision: the shell corpus under its fixed policy (zero wrongly allowed), and the
 * rule semantics for file calls — deny beats allow, matchers AND, paths all-or-any, default.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ApprovalRequest } from "../../../src/core/approval.js";
import { loadBashParser } from "../../../src/policy/shell/grammar/bash-parser.js";
import { decide } from "../../../src/policy/decide/decide.js";
import { parsePolicyText } from "../../../src/policy/file/policy-file.js";
import { analyzeShell } from "../../../src/policy/shell/shell-analysis.js";
import { resolveShellPathsLexically } from "../../../src/policy/shell/shell-paths.js";
import { CORPUS_POLICY_YAML, CORPUS_WORKSPACE, DENY_CORPUS, DENY_POLICY_YAML, SHELL_CORPUS } from "../shell-corpus.js";
import { DESIGN_POLICY_YAML } from "../../support/design-policy.js";

const WS = "/work/ws";

function fileCall(tool: string, paths: string[]): ApprovalRequest {
  return { callId: "c1", tool, effect: tool.startsWith("read") ? "read" : "write", input: {}, workspace: WS, paths };
}

function policyOf(yaml: string) {
  return parsePolicyText(yaml, "/policies/policy.yaml").policy;
}

test("the shell corpus: every command gets its expected decision, and none is wrongly allowed", async (t) => {
  const parser = await loadBashParser();
  const policy = policyOf(CORPUS_POLICY_YAML);
  assert.ok(SHELL_CORPUS.length >= 200, `the corpus has ${SHELL_CORPUS.length} commands`);
  const wronglyAllowed: string[] = [];
  for (const c of SHELL_CORPUS) {
    await t.test(`${c.group}: ${JSON.stringify(c.command)} → ${c.expect}${c.by ? ` (${c.by})` : ""}`, () => {
      const facts = resolveShellPathsLexically(analyzeShell(c.command, parser), CORPUS_WORKSPACE);
      const request: ApprovalRequest = {
        callId: "c", tool: "shell", effect: "exec", input: { command: c.command }, workspace: CORPUS_WORKSPACE, paths: [], command: c.command,
      };
      const decision = decide(request, policy, facts);
      if (decision.decision === "allow" && c.expect === "deny") wronglyAllowed.push(c.command);
      assert.equal(decision.decision, c.expect, `${decision.rule}: ${decision.reason}`);
      if (c.by !== undefined) assert.ok(decision.rule.includes(c.by), `expected rule "${c.by}", got ${decision.rule}: ${decision.reason}`);
      assert.ok(decision.reason.length > 0);
    });
  }
  assert.deepEqual(wronglyAllowed, []);
});

test("under default allow, deny rules still see every command however it is hidden", async (t) => {
  const parser = await loadBashParser();
  const policy = policyOf(DENY_POLICY_YAML);
  for (const c of DENY_CORPUS) {
    await t.test(`${c.group}: ${JSON.stringify(c.command)} → ${c.expect}`, () => {
      const facts = resolveShellPathsLexically(analyzeShell(c.command, parser), CORPUS_WORKSPACE);
      const request: ApprovalRequest = {
        callId: "c", tool: "shell", effect: "exec", input: { command: c.command }, workspace: CORPUS_WORKSPACE, paths: [], command: c.command,
      };
      const decision = decide(request, policy, facts);
      assert.equal(decision.decision, c.expect, `${decision.rule}: ${decision.reason}`);
    });
  }
});

test("a shell call without an analysis is denied, not guessed", () => {
  const policy = policyOf("version: 1\ndefault: allow\nrules: []\n");
  const request: ApprovalRequest = { callId: "c", tool: "shell", effect: "exec", input: {}, workspace: WS, paths: [], command: "ls" };
  assert.deepEqual(decide(request, policy), {
    decision: "deny", rule: "shell analysis", reason: "the shell command was not analysed, so it cannot be judged",
  });
});

const SECTION6 = DESIGN_POLICY_YAML;

test("write_file is allowed only when every path matches the rule's globs", () => {
  const policy = policyOf(SECTION6);
  assert.deepEqual(decide(fileCall("write_file", ["src/a.ts"]), policy), {
    decision: "allow", rule: "rule 2 (policy.yaml:5)", reason: "write_file on `src/a.ts` is allowed",
  });
  assert.deepEqual(decide(fileCall("write_file", ["lib/a.ts"]), policy), {
    decision: "deny", rule: "default (policy.yaml)",
    reason: "write_file on `lib/a.ts` is outside the paths rule 2 (policy.yaml:5) allows (src/**, test/**), and the default is deny",
  });
  assert.equal(decide(fileCall("edit_file", ["src/a.ts", "lib/b.ts"]), policy).decision, "deny");
  assert.equal(decide(fileCall("edit_file", ["src/a.ts", "test/b.ts"]), policy).decision, "allow");
});

test("a deny rule with paths and no tools denies any tool touching such a path, reads included", () => {
  const policy = policyOf(SECTION6);
  assert.deepEqual(decide(fileCall("read_file", ["src/.env"]), policy), {
    decision: "deny", rule: "rule 5 (policy.yaml:8)", reason: "read_file on `src/.env` matches `**/.env`",
  });
  assert.deepEqual(decide(fileCall("write_file", [".github/workflows/ci.yml"]), policy), {
    decision: "deny", rule: "rule 5 (policy.yaml:8)", reason: "write_file on `.github/workflows/ci.yml` matches `.github/**`",
  });
});

test("deny beats allow whatever the order of the rules", () => {
  const policy = policyOf(`version: 1
default: allow
rules:
  - allow: { tools: [write_file], paths: ["**"] }
  - deny: { tools: [write_file], paths: ["secret/**"], reason: secrets are read-only }
`);
  assert.deepEqual(decide(fileCall("write_file", ["secret/key"]), policy), {
    decision: "deny", rule: "rule 2 (policy.yaml:5)", reason: "secrets are read-only",
  });
  assert.equal(decide(fileCall("write_file", ["open/key"]), policy).decision, "allow");
});

test("no matching rule falls to the default, named as such", () => {
  const allowAll = policyOf("version: 1\ndefault: allow\nrules:\n  - deny: { tools: [shell] }\n");
  assert.deepEqual(decide(fileCall("write_file", ["x"]), allowAll), {
    decision: "allow", rule: "default (policy.yaml)", reason: "no rule decides write_file, and the default is allow",
  });
  const denyAll = policyOf("version: 1\ndefault: deny\nrules: []\n");
  assert.deepEqual(decide(fileCall("custom_tool", []), denyAll), {
    decision: "deny", rule: "default (policy.yaml)", reason: "no rule allows custom_tool, and the default is deny",
  });
});

test("an allow rule with paths never allows a call that touches no path", () => {
  const policy = policyOf("version: 1\ndefault: deny\nrules:\n  - allow: { paths: [\"**\"] }\n");
  assert.equal(decide(fileCall("deploy", []), policy).decision, "deny");
  assert.equal(decide(fileCall("deploy", ["site/index.html"]), policy).decision, "allow");
});

test("paths outside the workspace are denied at the boundary, even under default allow", () => {
  const policy = policyOf("version: 1\ndefault: allow\nrules: []\n");
  for (const path of ["../x", "/etc/passwd", ".."]) {
    assert.deepEqual(decide(fileCall("write_file", [path]), policy), {
      decision: "deny", rule: "workspace boundary", reason: `write_file touches \`${path}\`, which is outside the workspace`,
    });
  }
});

test("a rule with shell patterns does not apply to file tools, and the root '.' matches only **", () => {
  const policy = policyOf(`version: 1
default: deny
rules:
  - allow: { shell: ["ls *"] }
  - allow: { tools: [list_dir], paths: ["src/**"] }
  - allow: { tools: [glob], paths: ["**"] }
`);
  assert.equal(decide(fileCall("list_dir", ["."]), policy).decision, "deny");
  assert.equal(decide(fileCall("list_dir", ["src"]), policy).decision, "allow");
  assert.equal(decide(fileCall("glob", ["."]), policy).decision, "allow");
});

test("a rule naming the shell tool in tools allows judgeable commands, and redirections into the workspace", async () => {
  const parser = await loadBashParser();
  const policy = policyOf("version: 1\ndefault: deny\nrules:\n  - allow: { tools: [shell] }\n  - deny: { shell: [\"rm *\"] }\n");
  const shellCall = (command: string) => decide(
    { callId: "c", tool: "shell", effect: "exec", input: {}, workspace: WS, paths: [], command },
    policy, resolveShellPathsLexically(analyzeShell(command, parser), WS));
  assert.equal(shellCall("make test > out.log").decision, "allow");
  assert.equal(shellCall("rm x").decision, "deny");
  assert.equal(shellCall("$CMD").decision, "deny");
  assert.equal(shellCall("FOO=1 make").decision, "deny");
  assert.equal(shellCall("make > /tmp/x").rule, "workspace boundary");
});
