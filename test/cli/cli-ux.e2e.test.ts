/**
 * Small things a new user meets at the command line (issue 20, item 10), through the built CLI:
 * help that shows the command's own page and never breaks an example mid-command, one name per
 * unknown flag, `policy check --json` errors as JSON, the README synopsis agreeing with `--help`,
 * the `Reports:` line naming the copies, and `bench replay`'s numbers, chart path and chart.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { cliEnv, runCli } from "../support/cli.js";
import { corpusDir, repoRoot } from "../support/paths.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const COMMANDS = [["run"], ["validate"], ["policy", "check"], ["report", "merge"], ["report", "compare"], ["report", "trend"], ["report", "html"], ["bench", "replay"], ["bench", "calibrate"], ["cassette", "show"], ["cassette", "prune"]] as const;
const corpusFile = join(corpusDir, "ledger-totals.jsonl");

test("rhema policy, report and bench without a subcommand (and rhema alone) print their own help to stderr, exit 2", async (t) => {
  const dir = await tempDir(t);
  for (const [group, sub, all] of [["policy", "check", "check"], ["report", "merge", "merge, compare, trend, html"], ["bench", "replay", "replay, calibrate"], ["cassette", "show", "show, prune"]] as const) {
    for (const args of [[group], [group, "--json"]]) {
      const r = await runCli(args, { cwd: dir });
      assert.equal(r.code, 2, args.join(" "));
      assert.equal(r.stdout, "");
      assert.match(r.stderr, new RegExp(`^rhema ${group}\\n`), `${args.join(" ")}: its own help, not the top-level one:\n${r.stderr}`);
      assert.ok(r.stderr.includes(`rhema ${group} ${sub}`), r.stderr);
      assert.ok(!r.stderr.includes("rhema run <paths..>"), `${args.join(" ")} shows the top-level help:\n${r.stderr}`);
      assert.match(r.stderr, new RegExp(`\\nrhema: name a ${group} command: ${all}\\n$`));
    }
    const help = await runCli([group, "--help"], { cwd: dir });
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, new RegExp(`^rhema ${group}\\n`));
  }
  const bare = await runCli([], { cwd: dir });
  assert.equal(bare.code, 2);
  assert.match(bare.stderr, /^rhema <command>\n[\s\S]*rhema run <paths\.\.>[\s\S]*\nrhema: name a command: run, validate, policy, report, bench, cassette\n$/);
});

test("help examples stay one command a line at COLUMNS=80, each followed by its description", async (t) => {
  const dir = await tempDir(t);
  for (const command of [[], ...COMMANDS]) {
    const help = await runCli([...command, "--help"], { cwd: dir, env: cliEnv({ COLUMNS: "80" }) });
    assert.equal(help.code, 0, help.stderr);
    const section = /\nExamples:\n([\s\S]*?)(?:\n\n|\n?$)/.exec(help.stdout)?.[1];
    assert.ok(section, `${command.join(" ")}: no examples in\n${help.stdout}`);
    const lines = section.split("\n");
    assert.ok(lines.length >= 2 && lines.length % 2 === 0, `${command.join(" ")}:\n${section}`);
    for (let i = 0; i < lines.length; i += 2) {
      const [example, description] = [lines[i]!, lines[i + 1]!];
      assert.match(example, new RegExp(`^ {2}rhema ${command.join(" ")}`), `${command.join(" ")}: not a whole command: ${JSON.stringify(example)}`);
      assert.equal((example.match(/'/g) ?? []).length % 2, 0, `a quote left open, the command was cut: ${example}`);
      assert.match(description, /^ {6}\S/, `${command.join(" ")}: ${JSON.stringify(description)}`);
    }
    // The rest of the help is still wrapped to the width.
    const long = help.stdout.split("\n").filter((l) => l.length > 80 && !l.startsWith("  rhema "));
    assert.deepEqual(long, [], command.join(" "));
  }
});

test("an unknown dashed flag is named once, as typed", async (t) => {
  const dir = await tempDir(t);
  const one = await runCli(["validate", "x", "--unknown-flag"], { cwd: dir });
  assert.equal(one.code, 2);
  assert.equal(one.stderr, "rhema: Unknown argument: unknown-flag\nSee `rhema --help`.\n");
  const two = await runCli(["run", "x", "--max-cots", "1", "--dry-run", "--verbose"], { cwd: dir });
  assert.equal(two.code, 2);
  assert.equal(two.stderr, "rhema: Unknown arguments: max-cots, dry-run, verbose\nSee `rhema --help`.\n");
});

test("policy check --json prints JSON for usage errors too: a missing --policy, an unknown flag, a blank path", async (t) => {
  const dir = await tempDir(t);
  const cases: Array<[string[], RegExp]> = [
    [["--tool", "shell", "--input", "{}"], /Missing required argument: policy/],
    [["--policy", "preset:ci", "--input", "{}"], /Missing required argument: tool/],
    [["--policy", "preset:ci", "--tool", "shell", "--input", "{}", "--bogus-flag"], /^Unknown argument: bogus-flag$/],
    [["--policy", "", "--tool", "shell", "--input", "{}"], /Expected --policy to name a path/],
  ];
  for (const [args, error] of cases) {
    const r = await runCli(["policy", "check", ...args, "--json"], { cwd: dir });
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stderr, "", args.join(" "));
    const out = JSON.parse(r.stdout) as { error: string };
    assert.deepEqual(Object.keys(out), ["error"]);
    assert.match(out.error, error);
  }
  // Without --json the same errors stay prose on stderr.
  const prose = await runCli(["policy", "check", "--tool", "shell", "--input", "{}"], { cwd: dir });
  assert.deepEqual([prose.code, prose.stdout], [2, ""]);
  assert.match(prose.stderr, /^rhema: Missing required argument: policy\n/);
});

test("the README's command-line synopsis names exactly the flags each command's --help lists", async (t) => {
  const dir = await tempDir(t);
  const readme = await readFile(join(repoRoot, "README.md"), "utf8");
  const block = /## The command line\n\n```sh(?: synopsis)?\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, "the README's synopsis block");
  // Each command's lines: from its `rhema CMD` line to the next command's.
  const synopsis = new Map<string, Set<string>>();
  let current: string | null = null;
  for (const line of block.split("\n")) {
    const start = COMMANDS.map((c) => c.join(" ")).find((c) => line.startsWith(`rhema ${c} `) || line === `rhema ${c}`);
    if (start) current = start;
    if (current) for (const flag of line.replace(/#.*$/, "").match(/--[a-z][a-z-]*/g) ?? []) (synopsis.get(current) ?? synopsis.set(current, new Set()).get(current)!).add(flag);
  }
  for (const command of COMMANDS) {
    const help = await runCli([...command, "--help"], { cwd: dir });
    const flags = new Set([...help.stdout.matchAll(/^ {2}(?:-\w, | {4})?(--[a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((f) => f !== "--help" && f !== "--version"));
    assert.ok(flags.size > 0, command.join(" "));
    assert.deepEqual([...(synopsis.get(command.join(" ")) ?? [])].sort(), [...flags].sort(), `rhema ${command.join(" ")}: README synopsis against --help`);
  }
});

test("the Reports: line names the run's reports and report.html, and the --junit, --stats and --summary copies too", async (t) => {
  const dir = await tempDir(t);
  await writeFiles(dir, { "policy.yaml": OPEN_POLICY, "suite/a.yaml": "prompt: hi\nmodel: { provider: scripted, script: [{ say: ok }] }\n" });
  const args = ["run", "suite", "--policy", "policy.yaml", "--sandbox", "off", "--out", "out"];
  const plain = await runCli(args, { cwd: dir });
  assert.equal(plain.code, 0, plain.stderr);
  const out = join(dir, "out");
  assert.match(plain.stdout, new RegExp(`\\nReports: ${out}/junit\\.xml, ${out}/stats\\.json, ${out}/summary\\.md, ${out}/report\\.html\\n?$`));
  assert.ok((await stat(join(out, "report.html"))).isFile(), "the page it names is there");
  const copies = await runCli([...args, "--restart", "--junit", "ci/junit.xml", "--stats", "ci/stats.json", "--summary", "step-summary.md"], { cwd: dir });
  assert.equal(copies.code, 0, copies.stderr);
  const reports = copies.stdout.trimEnd().split("\n").at(-1)!;
  assert.equal(reports, `Reports: ${out}/junit.xml, ${out}/stats.json, ${out}/summary.md, ${out}/report.html; ` +
    `copies: --junit ${dir}/ci/junit.xml, --stats ${dir}/ci/stats.json, --summary ${dir}/step-summary.md (appended)`);
});

test("bench replay quotes a --budget, --block or --gap that is not a number (exit 2)", async (t) => {
  const dir = await tempDir(t);
  for (const [flag, value, rule] of [
    ["--budget", "abc", "a whole number of tokens from 1000 up"], ["--budget", "8k", "a whole number of tokens from 1000 up"],
    ["--budget", "", "a whole number of tokens from 1000 up"], ["--block", "abc", "a whole number of tokens above 0"],
    ["--block", "1.5", "a whole number of tokens above 0"], ["--gap", "abc", "a number of seconds from 0 up"], ["--gap", "-1", "a number of seconds from 0 up"],
  ] as const) {
    const r = await runCli(["bench", "replay", corpusFile, "--strategy", "sections", "--budget", "8000", flag, value], { cwd: dir });
    assert.equal(r.code, 2, `${flag} ${value}: ${r.stdout}`);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr, `rhema: ${flag} takes ${rule}, got ${JSON.stringify(value)}\n`);
  }
});

test("bench replay --chart into a missing folder or onto a folder: exit 3 naming the path, before the replay, nothing left", async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, "afolder"));
  for (const [chart, reason] of [["missing/c.svg", /no such file or folder \(ENOENT\)/], ["afolder", /is a folder \(EISDIR\)/], ["afolder/", /is a folder \(EISDIR\)/]] as const) {
    const r = await runCli(["bench", "replay", corpusFile, "--strategy", "sections", "--budget", "8000", "--chart", chart], { cwd: dir });
    assert.equal(r.code, 3, `${chart}: ${r.stderr}`);
    assert.equal(r.stdout, "", "nothing replayed, no table");
    assert.ok(r.stderr.startsWith(`rhema: cannot write ${join(dir, chart).replace(/\/$/, "")}: `), r.stderr);
    assert.match(r.stderr, reason);
    assert.doesNotMatch(r.stderr, /\.svg\.\d|rhema-probe/, "no temp file named");
  }
  assert.deepEqual((await readdir(dir)).sort(), ["afolder"]);
  assert.deepEqual(await readdir(join(dir, "afolder")), []);
});

test("bench replay's chart: ticks rounded, each point labelled with its budget; gap pts never -0.00", async (t) => {
  const dir = await tempDir(t);
  // One budget or many, a session that fits every budget (every figure equal: a one-value axis) or not.
  for (const [name, args] of [
    ["one", [corpusFile, "--budget", "8000", "--budget", "16000"]],
    ["chain", [corpusDir, "--chain", "--budget", "8000", "--budget", "16000", "--budget", "32000"]],
  ] as const) {
    const chart = join(dir, `${name}.svg`);
    const r = await runCli(["bench", "replay", ...args, "--chart", chart], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /-0\.0+\b/, "no -0.00 in the table");
    const texts = [...(await readFile(chart, "utf8")).matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
    for (const text of texts.filter((s) => /^-?[\d,]+(\.\d+)?$/.test(s))) {
      assert.match(text, /^[\d,]+(\.\d{1,3})?$/, `${name}: a tick label not rounded: ${text}`);
      assert.doesNotMatch(text, /\.\d*0$/, `${name}: trailing zeros: ${text}`);
    }
    // Each compacting strategy's point at each budget is labelled (the x axis of the other panel names each budget once).
    const budgets = args.filter((_a, i) => args[i - 1] === "--budget").map((b) => `${Number(b) / 1000}k`);
    for (const label of budgets) assert.equal(texts.filter((s) => s === label).length, 1 + 3, `${name}: labels ${label}: ${texts.join("|")}`);
  }
});

test("validate says each policy warning once, for a policy both in use and among the paths", async (t) => {
  const dir = await tempDir(t);
  await writeFiles(dir, {
    "suite/policy.yaml": "version: 1\ndefault: allow\nrules: []\n",
    "suite/a.yaml": "prompt: hi\npolicy: policy.yaml\nmodel: { provider: scripted, script: [{ say: ok }] }\n",
    "suite/b.yaml": "prompt: ho\npolicy: policy.yaml\nmodel: { provider: scripted, script: [{ say: ok }] }\n",
  });
  const r = await runCli(["validate", "suite"], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stderr.split("\n").filter((line) => line !== "");
  assert.ok(lines.length >= 2, r.stderr);
  assert.deepEqual(lines, [...new Set(lines)], "a warning said twice");
  assert.match(r.stderr, /deny list/);
});
