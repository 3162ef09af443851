/**
 * What a policy cannot hold: a `default: allow` policy is told that no deny list contains the
 * programs that run code given as data, and an allow rule for such a program is named.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DENY_LIST_LIMIT, permissiveWarnings } from "../../../src/policy/file/permissive-warnings.js";
import { parsePolicyText } from "../../../src/policy/file/policy-file.js";
import { presetPolicy } from "../../../src/policy/file/presets.js";

const policyOf = (yaml: string) => parsePolicyText(yaml, "/p/policy.yaml").policy;

test("a default-allow policy is told that a deny list cannot hold programs that run code given as data", () => {
  const warnings = permissiveWarnings(policyOf("version: 1\ndefault: allow\nrules:\n  - deny: { shell: [\"git push *\"] }\n"));
  assert.deepEqual(warnings, [`default (policy.yaml): \`default: allow\` makes this policy a deny list, and ${DENY_LIST_LIMIT}`]);
  assert.match(DENY_LIST_LIMIT, /a deny list cannot contain programs that run code given as data \(`python3 -c`/);
  assert.match(DENY_LIST_LIMIT, /use an allowlist \(`default: deny`\) and the OS sandbox/);
});

test("under a deny list, an allow rule for a program that runs code given as data is named too; plain commands are not", () => {
  const policy = policyOf(`version: 1
default: allow
rules:
  - allow: { shell: ["ls *", "git status", "cat *"] }
  - allow: { shell: ["python3 *", "npm test", "/usr/bin/make *", "echo *"] }
  - allow: { shell: ["*"] }
  - deny: { shell: ["node *"] }
`);
  assert.deepEqual(permissiveWarnings(policy).slice(1), [
    "rule 2 (policy.yaml:5) allows `python3 *`, `npm test`, `/usr/bin/make *`: these programs run code given as data — arguments, " +
    "and files the agent can write — so no rule sees what they do; only the OS sandbox (`sandbox: bwrap`) holds them",
  ]);
});

test("an allowlist says what it allows: the presets get no warning", () => {
  assert.deepEqual(permissiveWarnings(presetPolicy("read-only").policy), []);
  assert.deepEqual(permissiveWarnings(presetPolicy("workspace-write").policy), []);
  assert.deepEqual(permissiveWarnings(presetPolicy("ci").policy), []);
});
