/**
 * Every package `npm ci` installs runs on every Node rhema claims: package.json's `engines.node`
 * floor, the Node versions `.ci/run` tests on (OTHER_NODES) and the one running this test. A
 * dependency whose `engines.node` excludes one of them makes `npm ci` warn EBADENGINE (as
 * content-type 3 did on Node 20, through @actions/github → @octokit/request: pinned to 2.1.0 by
 * package.json's `overrides`); this test fails on it, naming the package and its range.
 * It reads package-lock.json — exactly what `npm ci` installs, whatever is in node_modules now.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { RangeSyntaxError, satisfiesNodeRange } from "./support/node-range.js";
import { repoRoot } from "./support/paths.js";

/** The Node versions rhema says it runs on. */
function claimedNodes(): string[] {
  const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { engines: { node: string } };
  const floor = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(pkg.engines.node.trim());
  assert.ok(floor, `package.json engines.node is ${JSON.stringify(pkg.engines.node)}: this test reads a ">=X.Y" floor`);
  const ci = /^OTHER_NODES=\(([^)]*)\)/m.exec(readFileSync(join(repoRoot, ".ci", "run"), "utf8"));
  assert.ok(ci, ".ci/run sets OTHER_NODES=(...)");
  const others = ci[1]!.trim().split(/\s+/);
  assert.ok(others.length > 0 && others.every((v) => /^\d+\.\d+\.\d+$/.test(v)), `OTHER_NODES holds exact versions: ${ci[1]}`);
  return [`${floor[1]}.${floor[2] ?? 0}.${floor[3] ?? 0}`, ...others, process.versions.node];
}

describe("the Node range check", () => {
  test("reads the forms packages write", () => {
    const cases: Array<[string, string, boolean]> = [
      ["20.19.0", ">=22", false], ["22.23.3", ">=22", true], ["20.19.0", ">= 20", true],
      ["22.5.0", "^20.19.0 || ^22.12.0 || >=23", false], ["22.12.0", "^20.19.0 || ^22.12.0 || >=23", true],
      ["20.19.0", "^20.19.0 || ^22.12.0 || >=23", true], ["24.21.0", "18 || 20 || >=22", true], ["21.0.0", "18 || 20 || >=22", false],
      ["20.19.0", "^20.17.0 || >=22.9.0", true], ["20.16.0", "^20.17.0 || >=22.9.0", false],
      ["0.7.1", ">=0.6.11 <=0.7.0 || >=0.7.3", false], ["20.19.0", "6.* || 8.* || >= 10.*", true], ["9.1.0", "6.* || 8.* || >= 10.*", false],
      ["0.8.4", ">=0.8.x", true], ["20.19.0", "~20.18", false], ["20.18.9", "~20.18", true], ["20.0.0", ">19", true], ["19.9.9", ">19", false],
      ["20.19.0", "<20.19.0", false], ["20.19.0", "<=20.19.0", true], ["20.19.0", "*", true],
    ];
    for (const [version, range, want] of cases) assert.equal(satisfiesNodeRange(version, range), want, `${version} in ${range}`);
    assert.throws(() => satisfiesNodeRange("20.19.0", "1.2 - 2.3"), RangeSyntaxError);
    assert.throws(() => satisfiesNodeRange("20.19.0", ">=20 && <22"), RangeSyntaxError);
  });
});

test("no package in package-lock.json has an engines.node that excludes a Node version rhema claims", () => {
  const nodes = claimedNodes();
  const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string; engines?: unknown }> };
  const excluded: string[] = [];
  let checked = 0;
  for (const [path, entry] of Object.entries(lock.packages)) {
    const engines = entry.engines;
    // Old packages wrote engines as an array of strings; npm ignores those, so does this test.
    if (typeof engines !== "object" || engines === null || Array.isArray(engines)) continue;
    const range = (engines as { node?: unknown }).node;
    if (typeof range !== "string") continue;
    checked += 1;
    const misses = nodes.filter((v) => !satisfiesNodeRange(v, range));
    if (misses.length > 0) excluded.push(`${path || "rhema"}@${entry.version ?? "?"}: engines.node ${JSON.stringify(range)} excludes Node ${misses.join(", ")}`);
  }
  assert.ok(checked > 20, `read ${checked} engines ranges`);
  assert.deepEqual(excluded, [], `claimed Node versions ${nodes.join(", ")}: pin a version that allows them (package.json "overrides"), then npm install --package-lock-only`);
});
