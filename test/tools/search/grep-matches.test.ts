import assert from "node:assert/strict";
import { test } from "node:test";
import { type GrepLine, MatchCollector, formatTally } from "../../../src/tools/search/grep-matches.js";

function feed(order: string[], perFile: Record<string, GrepLine[]>, max: number, context = 0): string {
  const collector = new MatchCollector(max, context);
  for (const path of order) for (const line of perFile[path]!) collector.push(path, line);
  return formatTally(collector.finish(), { context, maxBytes: 100_000 });
}

const hit = (line: number, text = `hit ${line}`): GrepLine => ({ line, match: true, text });

test("the kept matches do not depend on the order files arrive in", () => {
  const files: Record<string, GrepLine[]> = {};
  for (let i = 0; i < 30; i++) files[`f${String(i).padStart(2, "0")}`] = [hit(1), hit(5)];
  const sorted = Object.keys(files);
  const shuffled = [...sorted].sort((a, b) => ((a.charCodeAt(2) * 7) % 11) - ((b.charCodeAt(2) * 7) % 11) || (a < b ? 1 : -1));
  const expected = feed(sorted, files, 9);
  assert.equal(feed(shuffled, files, 9), expected);
  assert.equal(feed([...sorted].reverse(), files, 9), expected);
  assert.deepEqual(expected.split("\n"), [
    "f00:1:hit 1", "f00:5:hit 5", "f01:1:hit 1", "f01:5:hit 5", "f02:1:hit 1", "f02:5:hit 5", "f03:1:hit 1", "f03:5:hit 5",
    "f04:1:hit 1", "… 51 more matches not shown (60 matches in 30 files); narrow the pattern, path or glob to see the rest",
  ]);
});

test("one file with many matches is cut at the cap with its trailing context", () => {
  const lines: GrepLine[] = [];
  for (let i = 1; i <= 100; i++) lines.push(i % 2 ? hit(i) : { line: i, match: false, text: `ctx ${i}` });
  const text = feed(["big"], { big: lines }, 3, 1);
  assert.equal(text, "big:1:hit 1\nbig-2-ctx 2\nbig:3:hit 3\nbig-4-ctx 4\nbig:5:hit 5\nbig-6-ctx 6\n… 47 more matches not shown (50 matches in 1 files); narrow the pattern, path or glob to see the rest");
});

test("a file arriving in two pieces is merged", () => {
  const collector = new MatchCollector(10, 0);
  collector.push("a", hit(1));
  collector.push("b", hit(1));
  collector.push("a", hit(7));
  const tally = collector.finish();
  assert.deepEqual(tally.files.map((f) => [f.path, f.lines.map((l) => l.line)]), [["a", [1, 7]], ["b", [1]]]);
  assert.equal(tally.totalMatches, 3);
});

test("formatTally strips a CR and separates runs with -- when there is context", () => {
  const collector = new MatchCollector(10, 1);
  collector.push("a", { line: 1, match: true, text: "one\r" });
  collector.push("b", { line: 4, match: false, text: "ctx" });
  collector.push("b", { line: 5, match: true, text: "five" });
  assert.equal(formatTally(collector.finish(), { context: 1, maxBytes: 1000 }), "a:1:one\n--\nb-4-ctx\nb:5:five");
});
