/**
 * Policy files: malformed ones each give a clear error located at file:line:column (code
 * `policy_invalid`); valid-but-doubtful ones load with located warnings; rules are labelled
 * with their line.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PolicyFileError, loadPolicyFile, parsePolicyText, parsePolicyValue } from "../../../src/policy/file/policy-file.js";
import { tempDir } from "../../support/temp-dir.js";

const FILE = "/policies/policy.yaml";
const HEAD = "version: 1\ndefault: deny\n";

interface Malformed {
  name: string;
  yaml: string;
  /** `line:column` of the first problem. */
  at: string;
  /** Text the message must contain. */
  says: string;
}

const MALFORMED: Malformed[] = [
  { name: "bad YAML: unclosed flow sequence", yaml: `${HEAD}rules:\n  - allow: {tools: [read_file}\n`, at: "4:30", says: "invalid YAML: Flow sequence" },
  { name: "bad YAML: duplicate key", yaml: `${HEAD}default: allow\nrules: []\n`, at: "3:1", says: "Map keys must be unique" },
  { name: "bad YAML: tab indentation", yaml: `${HEAD}rules:\n\t- allow: {tools: [x]}\n`, at: "4:1", says: "Tabs are not allowed" },
  { name: "bad YAML: unclosed quote (where it opens)", yaml: "version: 1\ndefault: \"deny\nrules: []\n", at: "2:10", says: "invalid YAML: unclosed quote" },
  { name: "bad YAML: unresolved alias", yaml: "version: 1\ndefault: *x\nrules: []\n", at: "2:10", says: "Unresolved alias" },
  { name: "empty file", yaml: "", at: "1:1", says: "the policy file is empty" },
  { name: "a list, not a mapping", yaml: "- version: 1\n", at: "1:1", says: "expected object, received array" },
  { name: "unknown top-level key", yaml: `${HEAD}rules: []\nask: true\n`, at: "4:1", says: "unknown key `ask`" },
  { name: "unknown matcher key (a typo)", yaml: `${HEAD}rules:\n  - allow: { tools: [grep], pahts: [\"src/**\"] }\n`, at: "4:29", says: "rules.0.allow: unknown key `pahts`" },
  { name: "unknown key on a rule", yaml: `${HEAD}rules:\n  - allow: { tools: [grep] }\n    because: x\n`, at: "5:5", says: "rules.0: unknown key `because`" },
  { name: "missing default", yaml: "version: 1\nrules: []\n", at: "1:1", says: "missing key `default`" },
  { name: "wrong version", yaml: "version: 2\ndefault: deny\nrules: []\n", at: "1:10", says: "version: Invalid input: expected 1" },
  { name: "default is not allow or deny (no ask headless)", yaml: "version: 1\ndefault: ask\nrules: []\n", at: "2:10", says: "default: expected allow or deny (headless nobody can be asked" },
  { name: "rules is not a list", yaml: `${HEAD}rules: { allow: x }\n`, at: "3:8", says: "rules: Invalid input: expected array, received object" },
  { name: "tools is a string, not a list", yaml: `${HEAD}rules:\n  - allow: { tools: read_file }\n`, at: "4:21", says: "rules.0.allow.tools: Invalid input: expected array, received string" },
  { name: "empty tools list", yaml: `${HEAD}rules:\n  - allow: { tools: [] }\n`, at: "4:21", says: "rules.0.allow.tools: Too small" },
  { name: "reason is a number", yaml: `${HEAD}rules:\n  - deny: { shell: [\"git push *\"], reason: 5 }\n`, at: "4:44", says: "rules.0.deny.reason: Invalid input: expected string" },
  { name: "both allow and deny in one rule", yaml: `${HEAD}rules:\n  - allow: { tools: [a] }\n    deny: { tools: [b] }\n`, at: "4:5", says: "exactly one of them" },
  { name: "a rule with no matcher", yaml: `${HEAD}rules:\n  - allow: {}\n`, at: "4:12", says: "a rule needs at least one matcher" },
  { name: "bad glob: absolute", yaml: `${HEAD}rules:\n  - deny: { paths: [\"/etc/**\"] }\n`, at: "4:21", says: "`/etc/**` is absolute" },
  { name: "bad glob: climbs out with ..", yaml: `${HEAD}rules:\n  - deny: { paths: [\"src/**\", \"../x\"] }\n`, at: "4:31", says: "rules.0.deny.paths.1: `../x` contains \"..\"" },
  { name: "bad glob: unclosed bracket", yaml: `${HEAD}rules:\n  - deny: { paths: [\"src/[a\"] }\n`, at: "4:21", says: "has an unclosed `[`" },
  { name: "bad glob: leading ./", yaml: `${HEAD}rules:\n  - allow: { paths: [\"./src/**\"] }\n`, at: "4:22", says: "starts with ./" },
  { name: "bad glob: negated", yaml: `${HEAD}rules:\n  - allow: { paths: [\"!src/**\"] }\n`, at: "4:22", says: "negation is not supported" },
  { name: "bad shell pattern: joins commands", yaml: `${HEAD}rules:\n  - allow: { shell: [\"npm test && rm -rf /\"] }\n`, at: "4:22", says: "a pattern matches one simple command" },
  { name: "bad shell pattern: unclosed quote", yaml: `${HEAD}rules:\n  - allow: { shell: [\"echo 'x\"] }\n`, at: "4:22", says: "unclosed single quote" },
];

for (const c of MALFORMED) {
  test(`malformed policy: ${c.name} → ${c.at}`, () => {
    assert.throws(() => parsePolicyText(c.yaml, FILE), (err: unknown) => {
      assert.ok(err instanceof PolicyFileError, String(err));
      assert.equal(err.code, "policy_invalid");
      assert.equal(err.file, FILE);
      const firstLine = err.message.split("\n")[0]!;
      assert.ok(firstLine.startsWith(`${FILE}:${c.at}: `), `message was: ${err.message}`);
      assert.ok(err.message.includes(c.says), `message was: ${err.message}`);
      assert.equal(`${err.line}:${err.column}`, c.at);
      return true;
    });
  });
}

test("every problem in a file is reported, in file order", () => {
  const yaml = `version: 3\ndefault: deny\nrules:\n  - allow: { tools: read_file }\n  - deny: { paths: ["/x"] }\n`;
  assert.throws(() => parsePolicyText(yaml, FILE), (err: PolicyFileError) => {
    assert.deepEqual(err.issues.map((i) => `${i.line}:${i.column}`), ["1:10", "4:21", "5:21"]);
    return true;
  });
});

test("`default: allow` with no rules loads, with a located warning beside it", () => {
  const { policy, warnings } = parsePolicyText("version: 1\ndefault: allow\nrules: []\n", FILE);
  assert.equal(policy.default, "allow");
  assert.deepEqual(warnings, [{
    file: FILE, line: 2, column: 10,
    message: "warning: `default: allow` with no rules allows every tool call, shell commands included",
  }]);
});

test("doubtful choices are warnings: pointless allow rules, custom tool names, a `*` pattern", () => {
  const yaml = "version: 1\ndefault: allow\nrules:\n  - allow: { tools: [deploy_site] }\n  - allow: { shell: [\"*\"] }\n";
  const { warnings } = parsePolicyText(yaml, FILE);
  assert.deepEqual(warnings.map((w) => `${w.line}:${w.column} ${w.message}`), [
    "2:10 warning: `default: allow` and no deny rule: every call is allowed, the allow rules change nothing",
    "4:22 warning: `deploy_site` is not a built-in tool (read_file, write_file, edit_file, list_dir, glob, grep, shell); fine if it is a custom tool",
    "5:22 warning: `*` allows every command",
  ]);
});

test("a valid file loads without warnings, each rule labelled with its file and line", () => {
  const yaml = `# CI policy
version: 1
default: deny
rules:
  - allow: { tools: [read_file, list_dir, glob, grep] }

  - allow:
      tools: [write_file, edit_file]
      paths: ["src/**"]
  - deny: { shell: ["git push *"], reason: no pushes from CI }
`;
  const { policy, warnings } = parsePolicyText(yaml, FILE);
  assert.deepEqual(warnings, []);
  assert.deepEqual(policy.rules.map((r) => [r.label, r.effect, r.tools, r.paths, r.shell?.map((p) => p.source) ?? null, r.reason]), [
    ["rule 1 (policy.yaml:5)", "allow", ["read_file", "list_dir", "glob", "grep"], null, null, null],
    ["rule 2 (policy.yaml:7)", "allow", ["write_file", "edit_file"], ["src/**"], null, null],
    ["rule 3 (policy.yaml:10)", "deny", null, null, ["git push *"], "no pushes from CI"],
  ]);
  assert.equal(policy.defaultLabel, "default (policy.yaml)");
});

test("loadPolicyFile reads from disk, and a missing file is a PolicyFileError naming it", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "ci.yaml");
  await writeFile(file, "version: 1\ndefault: deny\nrules:\n  - allow: { tools: [grep] }\n");
  const { policy } = await loadPolicyFile(file);
  assert.equal(policy.rules[0]!.label, "rule 1 (ci.yaml:4)");
  const missing = join(dir, "missing.yaml");
  await assert.rejects(loadPolicyFile(missing), (err: PolicyFileError) => {
    assert.equal(err.code, "policy_invalid");
    assert.ok(err.message.startsWith(`${missing}: cannot read the policy file:`), err.message);
    return true;
  });
});

test("an inline policy (inside a task file) may leave out version, and its problems point at the block", () => {
  const { policy } = parsePolicyValue({ default: "deny", rules: [{ allow: { tools: ["grep"] } }] }, { file: "/t/task.yaml", line: 7, column: 9 });
  assert.equal(policy.rules[0]!.label, "rule 1 (task.yaml:7)");
  assert.throws(
    () => parsePolicyValue({ default: "maybe", rules: [] }, { file: "/t/task.yaml", line: 7, column: 9 }),
    (err: PolicyFileError) => err.message.startsWith("/t/task.yaml:7:9: policy: default: expected allow or deny"),
  );
});

test("a misspelled tool name is an error located at the name, saying did you mean", () => {
  const yaml = "version: 1\ndefault: deny\nrules:\n  - allow: { tools: [read_file, edit_fiel] }\n  - deny: { tools: [shel] }\n";
  assert.throws(() => parsePolicyText(yaml, FILE), (err: unknown) => {
    assert.ok(err instanceof PolicyFileError);
    assert.equal(err.message, [
      "/policies/policy.yaml:4:33: rules.0.allow.tools.1: `edit_fiel` is not a built-in tool: did you mean `edit_file`?",
      "/policies/policy.yaml:5:21: rules.1.deny.tools.0: `shel` is not a built-in tool: did you mean `shell`?",
    ].join("\n"));
    return true;
  });
});

test("an inline policy's misspelled tool points at the name when the task file locates it", () => {
  const positions: Record<string, { line: number; column: number }> = { "rules.0.allow.tools.0": { line: 12, column: 22 } };
  const locate = (path: readonly PropertyKey[]) => positions[path.join(".")] ?? { line: 7, column: 9 };
  assert.throws(
    () => parsePolicyValue({ default: "deny", rules: [{ allow: { tools: ["grpe"] } }] }, { file: "/t/task.yaml", line: 7, column: 9, locate }),
    (err: unknown) => err instanceof PolicyFileError && err.message === "/t/task.yaml:12:22: policy: rules.0.allow.tools.0: `grpe` is not a built-in tool: did you mean `grep`?",
  );
});

test("a policy may ask for a sandbox mode and open the network; absent, both are null (auto and deny are the runner's defaults)", () => {
  const asked = parsePolicyText("version: 1\ndefault: deny\nsandbox: bwrap\nnetwork: allow\nrules: []\n", "/p/ci.yaml").policy;
  assert.deepEqual([asked.sandbox, asked.network], ["bwrap", "allow"]);
  const silent = parsePolicyText("version: 1\ndefault: deny\nrules: []\n", "/p/ci.yaml").policy;
  assert.deepEqual([silent.sandbox, silent.network], [null, null]);
  assert.throws(() => parsePolicyText("version: 1\ndefault: deny\nsandbox: always\nnetwork: yes\nrules: []\n", "/p/ci.yaml"), (err: unknown) => {
    assert.ok(err instanceof PolicyFileError);
    assert.equal(err.message, "/p/ci.yaml:3:10: sandbox: expected auto, bwrap or off\n/p/ci.yaml:4:10: network: expected allow or deny");
    return true;
  });
});
