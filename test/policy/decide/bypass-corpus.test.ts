/**
 * The bypass corpus (test/policy/bypass-corpus.ts): every disguise of issue 10 denied, the
 * commands of the same shape that do no harm allowed — by text under the shell corpus's
 * policies and a policy allowing writers by name, and on a real workspace with links for the
 * cases only a file system can decide. Zero wrongly allowed is the bar.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ApprovalRequest } from "../../../src/core/approval.js";
import { loadBashParser } from "../../../src/policy/shell/grammar/bash-parser.js";
import { decide } from "../../../src/policy/decide/decide.js";
import { PolicyApproval } from "../../../src/policy/decide/policy-approval.js";
import { parsePolicyText } from "../../../src/policy/file/policy-file.js";
import { analyzeShell } from "../../../src/policy/shell/shell-analysis.js";
import { resolveShellPathsLexically } from "../../../src/policy/shell/shell-paths.js";
import {
  BYPASS_ALLOW_CORPUS, BYPASS_DENY_CORPUS, DISK_CORPUS, DISK_POLICY_YAML, PUSH_CORPUS, PUSH_POLICY_YAML, REPARSE_CORPUS, REPARSE_POLICY_YAML,
  WRITE_CORPUS, WRITE_POLICY_YAML,
} from "../bypass-corpus.js";
import { CORPUS_POLICY_YAML, CORPUS_WORKSPACE, type CorpusCase, DENY_POLICY_YAML } from "../shell-corpus.js";
import { tempDir } from "../../support/temp-dir.js";

type Decider = (command: string) => Promise<{ decision: string; rule: string; reason: string }>;

function shellRequest(command: string, workspace: string): ApprovalRequest {
  return { callId: "c", tool: "shell", effect: "exec", input: { command }, workspace, paths: [], command };
}

async function byText(yaml: string): Promise<Decider> {
  const parser = await loadBashParser();
  const { policy } = parsePolicyText(yaml, "/policies/policy.yaml");
  return async (command) => decide(shellRequest(command, CORPUS_WORKSPACE), policy, resolveShellPathsLexically(analyzeShell(command, parser), CORPUS_WORKSPACE));
}

async function judge(t: test.TestContext, cases: readonly CorpusCase[], decider: Decider): Promise<void> {
  const wronglyAllowed: string[] = [];
  const wronglyDenied: string[] = [];
  for (const c of cases) {
    await t.test(`${c.group}: ${JSON.stringify(c.command)} → ${c.expect}${c.by ? ` (${c.by})` : ""}`, async () => {
      const decision = await decider(c.command);
      if (decision.decision === "allow" && c.expect === "deny") wronglyAllowed.push(c.command);
      if (decision.decision === "deny" && c.expect === "allow") wronglyDenied.push(c.command);
      assert.equal(decision.decision, c.expect, `${decision.rule}: ${decision.reason}`);
      if (c.by !== undefined) assert.ok(decision.rule.includes(c.by), `expected rule "${c.by}", got ${decision.rule}: ${decision.reason}`);
      assert.ok(decision.reason.length > 0);
    });
  }
  t.diagnostic(`${cases.length} cases, ${cases.filter((c) => c.expect === "deny").length} to deny: ${wronglyAllowed.length} wrongly allowed, ${wronglyDenied.length} wrongly denied`);
  assert.deepEqual(wronglyAllowed, []);
}

test("under default deny, no disguise gets an allowed command to do what the policy forbids", async (t) => {
  assert.ok(BYPASS_DENY_CORPUS.length >= 300, `${BYPASS_DENY_CORPUS.length} cases`);
  await judge(t, BYPASS_DENY_CORPUS, await byText(CORPUS_POLICY_YAML));
});

test("under default allow, the deny rules see through every wrapper, builtin, alias and other name", async (t) => {
  assert.ok(BYPASS_ALLOW_CORPUS.length >= 300, `${BYPASS_ALLOW_CORPUS.length} cases`);
  await judge(t, BYPASS_ALLOW_CORPUS, await byText(DENY_POLICY_YAML));
});

test("a deny list naming only `git push *` still sees the push behind global options, aliases, wrappers and other names", async (t) => {
  assert.ok(PUSH_CORPUS.length >= 200, `${PUSH_CORPUS.length} cases`);
  await judge(t, PUSH_CORPUS, await byText(PUSH_POLICY_YAML));
});

test("a command allowed by name writes only where writing is allowed, through any option or operand", async (t) => {
  await judge(t, WRITE_CORPUS, await byText(WRITE_POLICY_YAML));
});

test("an allowlist that allows declare, let and compgen still judges every command inside the text bash parses again", async (t) => {
  await judge(t, REPARSE_CORPUS, await byText(REPARSE_POLICY_YAML));
});

/** The workspace DISK_CORPUS describes, and the folder outside it. */
async function diskWorkspace(t: test.TestContext): Promise<string> {
  const root = await tempDir(t, "rhema-bypass-");
  const ws = join(root, "ws");
  const outside = join(root, "outside");
  await mkdir(join(ws, ".github", "workflows"), { recursive: true });
  await mkdir(join(ws, "src"), { recursive: true });
  await mkdir(join(ws, "clean"), { recursive: true });
  await mkdir(join(ws, "far"), { recursive: true });
  await mkdir(outside);
  await writeFile(join(ws, "README.md"), "readme\n");
  await writeFile(join(ws, ".env"), "KEY=1\n");
  await writeFile(join(ws, ".github", "workflows", "ci.yml"), "on: push\n");
  await writeFile(join(ws, "src", "a.ts"), "export {};\n");
  await writeFile(join(ws, "clean", "b.ts"), "export {};\n");
  await writeFile(join(ws, "far", "c.ts"), "export {};\n");
  await writeFile(join(outside, "secret"), "s3cret\n");
  await symlink(outside, join(ws, "src", "out"));
  await symlink(outside, join(ws, "far", "out"));
  await symlink(join(outside, "secret"), join(ws, "far", "file"));
  await symlink(join(ws, ".env"), join(ws, "src", "envlink"));
  await symlink(join(ws, ".github"), join(ws, "src", "gh"));
  await symlink(join(outside, "secret"), join(ws, "src", "file"));
  await mkdir(join(ws, "inner"));
  await mkdir(join(ws, "src", "ok"));
  await mkdir(join(ws, "deep", "sub"), { recursive: true });
  await symlink(join(ws, "clean"), join(ws, "inner", "c"));
  await symlink(join("..", "clean", "b.ts"), join(ws, "inner", "b.ts"));
  await symlink(join("..", "..", "clean"), join(ws, "src", "ok", "c"));
  await symlink(outside, join(ws, "deep", "sub", "out"));
  return realpath(ws);
}

test("on a real workspace: links out or to denied paths are followed as the commands follow them, folders judged by what they hold", async (t) => {
  const ws = await diskWorkspace(t);
  const approval = new PolicyApproval(parsePolicyText(DISK_POLICY_YAML, "/policies/policy.yaml").policy);
  const signal = new AbortController().signal;
  await judge(t, DISK_CORPUS, (command) => approval.decide(shellRequest(command, ws), signal) as ReturnType<Decider>);
});
