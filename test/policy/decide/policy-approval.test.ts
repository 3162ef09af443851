/**
 * PolicyApproval on a real temp workspace: paths arrive realpath'd as the engine produces them,
 * shell redirections are resolved through symlinks (including `link/..` and dangling links),
 * denials are counted, and an aborted signal is the only way to make it reject.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import type { ApprovalRequest } from "../../../src/core/approval.js";
import { CancelledError } from "../../../src/core/errors.js";
import { loadBashParser } from "../../../src/policy/shell/grammar/bash-parser.js";
import { decide } from "../../../src/policy/decide/decide.js";
import { PolicyApproval } from "../../../src/policy/decide/policy-approval.js";
import { parsePolicyText } from "../../../src/policy/file/policy-file.js";
import { analyzeShell } from "../../../src/policy/shell/shell-analysis.js";
import { resolveShellPathsLexically } from "../../../src/policy/shell/shell-paths.js";
import { tempDir } from "../../support/temp-dir.js";

const POLICY = `version: 1
default: deny
rules:
  - allow: { tools: [read_file, list_dir, glob, grep] }
  - allow: { tools: [write_file, edit_file], paths: ["src/**"] }
  - allow: { shell: ["echo *", "cat *", "cd *", "ls *"] }
  - deny:  { shell: ["git push *"], reason: no pushes from CI }
  - deny:  { paths: [".github/**", "**/.env"] }
`;

interface Fixture {
  ws: string;
  outside: string;
}

/** ws/{src,.github/workflows,.env}, with links: src/gh → .github, src/deep → .github/workflows, src/out → outside. */
async function workspace(t: Parameters<typeof tempDir>[0]): Promise<Fixture> {
  const root = await tempDir(t, "rhema-policy-");
  const ws = join(root, "ws");
  const outside = join(root, "outside");
  await mkdir(join(ws, "src"), { recursive: true });
  await mkdir(join(ws, ".github", "workflows"), { recursive: true });
  await mkdir(outside);
  await writeFile(join(ws, ".env"), "KEY=1\n");
  await symlink(join(ws, ".github"), join(ws, "src", "gh"));
  await symlink(join(ws, ".github", "workflows"), join(ws, "src", "deep"));
  await symlink(outside, join(ws, "src", "out"));
  await symlink(join(outside, "not-yet"), join(ws, "src", "dangling"));
  await symlink(join(ws, ".env"), join(ws, "src", "envlink"));
  return { ws: await realpath(ws), outside };
}

/** What the engine hands the approval: the path resolved through realpath, workspace-relative. */
async function resolvedPath(ws: string, path: string): Promise<string> {
  const abs = join(ws, path);
  const real = await realpath(abs).catch(async () => join(await realpath(dirname(abs)), abs.slice(dirname(abs).length + 1)));
  return relative(ws, real).split("\\").join("/");
}

function request(ws: string, fields: Partial<ApprovalRequest> & { tool: string }): ApprovalRequest {
  return { callId: "call-1", effect: "exec", input: {}, workspace: ws, paths: [], ...fields };
}

const signal = () => new AbortController().signal;
const approval = () => new PolicyApproval(parsePolicyText(POLICY, "/p/policy.yaml").policy);

test("write_file through a symlink into .github is denied, on the path the engine resolved", async (t) => {
  const { ws } = await workspace(t);
  const path = await resolvedPath(ws, "src/gh/workflows/ci.yml");
  assert.equal(path, ".github/workflows/ci.yml");
  const decision = await approval().decide(request(ws, { tool: "write_file", effect: "write", paths: [path] }), signal());
  assert.deepEqual(decision, { decision: "deny", rule: "rule 5 (policy.yaml:8)", reason: "write_file on `.github/workflows/ci.yml` matches `.github/**`" });
});

test("write_file on a `..` path is judged where it lands", async (t) => {
  const { ws } = await workspace(t);
  const path = await resolvedPath(ws, "src/../.github/x.yml");
  assert.equal(path, ".github/x.yml");
  const policyApproval = approval();
  assert.equal((await policyApproval.decide(request(ws, { tool: "write_file", paths: [path] }), signal())).decision, "deny");
  const allowed = await policyApproval.decide(request(ws, { tool: "write_file", paths: [await resolvedPath(ws, "src/../src/a.ts")] }), signal());
  assert.equal(allowed.decision, "allow");
});

test("a shell redirection through a symlink is resolved like the kernel would", async (t) => {
  const { ws } = await workspace(t);
  const parser = await loadBashParser();
  const cases: Array<[string, string, string]> = [
    ["echo x > src/gh/ci.yml", "deny", "rule 5 (policy.yaml:8)"],
    ["echo x >> src/deep/../ci.yml", "deny", "rule 5 (policy.yaml:8)"],
    ["cd src/gh && echo x > ci.yml", "deny", "rule 5 (policy.yaml:8)"],
    ["echo x > src/out/f", "deny", "workspace boundary"],
    ["echo x > src/dangling", "deny", "workspace boundary"],
    ["cat src/envlink", "deny", "rule 5 (policy.yaml:8)"],
    ["echo x > src/a.ts", "allow", "rule 3 (policy.yaml:6); rule 2 (policy.yaml:5)"],
    ["echo x > src/new/dir/a.ts", "allow", "rule 3 (policy.yaml:6); rule 2 (policy.yaml:5)"],
  ];
  for (const [command, expected, rule] of cases) {
    const decision = await approval().decide(request(ws, { tool: "shell", command }), signal());
    assert.equal(decision.decision, expected, `${command}: ${decision.rule}: ${decision.reason}`);
    assert.equal(decision.rule, rule, command);
  }
  // By text alone the first two would look like writes inside src/: the file system decides.
  const lexical = decide(request(ws, { tool: "shell", command: "echo x > src/gh/ci.yml" }), approval().policy,
    resolveShellPathsLexically(analyzeShell("echo x > src/gh/ci.yml", parser), ws));
  assert.equal(lexical.decision, "allow");
});

test("denials are counted with what was denied, allows are not", async (t) => {
  const { ws } = await workspace(t);
  const policyApproval = approval();
  await policyApproval.decide(request(ws, { callId: "a", tool: "shell", command: "git push origin" }), signal());
  await policyApproval.decide(request(ws, { callId: "b", tool: "read_file", effect: "read", paths: ["src/a.ts"] }), signal());
  await policyApproval.decide(request(ws, { callId: "c", tool: "write_file", paths: ["lib/x"] }), signal());
  assert.equal(policyApproval.denialCount, 2);
  assert.deepEqual(policyApproval.denials, [
    { callId: "a", tool: "shell", rule: "rule 4 (policy.yaml:7)", reason: "no pushes from CI", command: "git push origin", paths: [] },
    {
      callId: "c", tool: "write_file", rule: "default (policy.yaml)", paths: ["lib/x"],
      reason: "write_file on `lib/x` is outside the paths rule 2 (policy.yaml:5) allows (src/**), and the default is deny",
    },
  ]);
});

test("an aborted signal rejects with CancelledError; nothing else does", async (t) => {
  const { ws } = await workspace(t);
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(approval().decide(request(ws, { tool: "shell", command: "ls" }), controller.signal), CancelledError);
});

test("a parser that cannot load denies the shell call instead of throwing", async (t) => {
  const { ws } = await workspace(t);
  const broken = new PolicyApproval(approval().policy, { loadParser: () => Promise.reject(new Error("wasm missing")) });
  const decision = await broken.decide(request(ws, { tool: "shell", command: "ls" }), signal());
  assert.deepEqual(decision, {
    decision: "deny", rule: "shell analysis", reason: "the command could not be analysed (wasm missing), so it is denied",
  });
  assert.equal(broken.denialCount, 1);
  // File calls need no parser.
  assert.equal((await broken.decide(request(ws, { tool: "read_file", paths: ["src/a.ts"] }), signal())).decision, "allow");
});
