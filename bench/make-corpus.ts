/**
 * bench/make-corpus: generates the in-repository replay corpus (`npm run bench:corpus`), the
 * input of `npm run bench:replay`, the replay tests and the README's replay table.
 *
 * It writes a suite of scripted tasks into a temporary folder — small JavaScript projects made
 * here from fixed tables (modules, CSV data, a test runner with one planted bug), each with a
 * scripted model that works like a shell-only agent: looks around, runs the tests, reads the
 * modules and data, fixes the bug with `sed -i`, runs the tests again, finishes — runs it with
 * the built `rhema` (`rhema run SUITE --sandbox off --concurrency 1`), reads each task's
 * checkpointed session from the run directory, and writes it in the corpus format
 * (bench/corpus/README.md): `<task>.jsonl`, one message a line, and `<task>.times.json`, the
 * seconds at which each step was taken.
 *
 * Deterministic: the projects and scripts are fixed, the commands (GNU coreutils, in the C locale)
 * print nothing that depends on the machine or the time, the workspace path, platform, shell and date of the system prompt are
 * replaced by fixed values, and the step times are a fixed schedule (a scripted model answers in
 * milliseconds; the schedule gives the think time of a real one — seconds per step, longer after
 * long outputs, and one idle pause past the cache's 5-minute lifetime in two sessions).
 * test/bench/make-corpus.test.ts regenerates the corpus and compares it byte for byte.
 *
 * Usage: node dist/bench/make-corpus.js [OUT] (default bench/corpus/scripted).
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Message } from "../src/core/messages.js";
import { readRunDirSessions } from "../src/runner/run-dir/recorded-sessions.js";
import { CLI, cliEnv } from "../test/support/cli.js";
import { corpusDir } from "../test/support/paths.js";

/** One entity of a project: a module `src/<name>.js` and its data `data/<name>.csv`. */
interface Entity {
  name: string;
  /** Numeric fields after `id`, in CSV order. */
  fields: string[];
  rows: number;
}

type Bug =
  /** `total<Entity>` floors each value: the totals come out low. */
  | { kind: "floor"; entity: string }
  /** `parse<Entity>` reads `field` one cell to the right: the next field's values, or NaN past the last column. */
  | { kind: "shifted-cell"; entity: string; field: string }
  /** `check<Entity>` refuses 0 for `field`, which the data holds. */
  | { kind: "zero-refused"; entity: string; field: string };

interface Project {
  /** The task's id, and the corpus file's name. */
  id: string;
  title: string;
  prompt: string;
  entities: Entity[];
  bug: Bug;
  /** Extra steps after the first test run (a wrong guess, a second look). */
  detours: Array<{ say: string; command: string }>;
  /** The step after which the agent idles 7 minutes (past the cache's 5-minute lifetime). */
  pauseAfterStep?: number;
}

const PROJECTS: Project[] = [
  {
    id: "ledger-totals",
    title: "ledger",
    prompt: "The invoice totals of the ledger come out too low and `node test/run.js` fails. Find the cause and fix it without changing the data.",
    entities: [
      { name: "accounts", fields: ["opening", "limit"], rows: 40 },
      { name: "invoices", fields: ["net", "vat", "discount"], rows: 90 },
      { name: "payments", fields: ["amount", "fee"], rows: 80 },
      { name: "refunds", fields: ["amount"], rows: 30 },
    ],
    bug: { kind: "floor", entity: "invoices" },
    detours: [
      { say: "Maybe the data has stray spaces; I check a few lines byte by byte.", command: "head -n 3 data/invoices.csv | od -c | head -n 12" },
    ],
  },
  {
    id: "inventory-parse",
    title: "inventory",
    prompt: "Stock checks report NaN for the weight of every item. Fix the inventory project so that `node test/run.js` passes.",
    entities: [
      { name: "items", fields: ["stock", "reorder", "price", "weight"], rows: 120 },
      { name: "suppliers", fields: ["leadDays", "rating"], rows: 25 },
      { name: "warehouses", fields: ["capacity", "used"], rows: 12 },
      { name: "orders", fields: ["quantity", "price"], rows: 100 },
      { name: "returns", fields: ["quantity"], rows: 35 },
    ],
    bug: { kind: "shifted-cell", entity: "items", field: "weight" },
    detours: [
      { say: "Let me see whether another module has the same pattern.", command: "grep -n \"cells\\[\" src/*.js" },
      { say: "I run only the items checks to see the failing rows up close.", command: "node test/run.js items" },
    ],
    pauseAfterStep: 9,
  },
  {
    id: "clinic-zero",
    title: "clinic",
    prompt: "Visits with no charge (a charge of 0) are rejected as invalid by the clinic project's checks. They are valid. Fix it; `node test/run.js` must pass.",
    entities: [
      { name: "patients", fields: ["age", "visits"], rows: 60 },
      { name: "visits", fields: ["minutes", "charge", "room"], rows: 140 },
      { name: "rooms", fields: ["beds", "floor"], rows: 10 },
    ],
    bug: { kind: "zero-refused", entity: "visits", field: "charge" },
    detours: [
      { say: "First a look at how often the charge is 0.", command: "cut -d, -f3 data/visits.csv | sort -n | uniq -c | head -n 5" },
      { say: "A wrong guess to rule out: is it the parser?", command: "sed -n '1,20p' src/visits.js" },
    ],
  },
  {
    id: "fleet-totals",
    title: "fleet",
    prompt: "The fleet report's fuel totals disagree with the spreadsheet. Make `node test/run.js` pass by fixing the code, not the tests.",
    entities: [
      { name: "vehicles", fields: ["seats", "mileage"], rows: 45 },
      { name: "trips", fields: ["distance", "fuel", "tolls"], rows: 150 },
      { name: "drivers", fields: ["hours", "trips"], rows: 30 },
      { name: "repairs", fields: ["parts", "labour"], rows: 50 },
      { name: "fuelcards", fields: ["limit", "spent"], rows: 40 },
      { name: "depots", fields: ["bays"], rows: 8 },
    ],
    bug: { kind: "floor", entity: "trips" },
    detours: [
      { say: "The expected totals come from the test runner; let me read how it computes them.", command: "sed -n '1,40p' test/run.js" },
    ],
    pauseAfterStep: 14,
  },
  {
    id: "school-parse",
    title: "school",
    prompt: "Absences of every student fail validation after last week's change to the school project. Find the regression and fix it so that `node test/run.js` passes.",
    entities: [
      { name: "students", fields: ["year", "grade", "absences"], rows: 110 },
      { name: "courses", fields: ["credits", "seats"], rows: 24 },
      { name: "teachers", fields: ["hours"], rows: 18 },
      { name: "exams", fields: ["score", "weight"], rows: 90 },
    ],
    bug: { kind: "shifted-cell", entity: "students", field: "absences" },
    detours: [
      { say: "I compare the students module with a module that works.", command: "diff src/students.js src/exams.js" },
    ],
  },
];

// --- the projects' files -------------------------------------------------------------------

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);

/** A fixed sequence of numbers per entity (a linear congruential generator seeded by its name). */
function numbers(seed: string): () => number {
  let state = [...seed].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
}

/** Rows of an entity: whole numbers and cents; every sixth value is 0. */
function rowsOf(e: Entity): number[][] {
  const next = numbers(e.name);
  const out: number[][] = [];
  for (let i = 1; i <= e.rows; i += 1) {
    out.push([i, ...e.fields.map((_, k) => {
      const r = next();
      if (r % 6 === 0) return 0;
      return k % 2 === 0 ? (r % 100_000) / 100 : r % 500;
    })]);
  }
  return out;
}

function csvOf(e: Entity): string {
  return [["id", ...e.fields].join(","), ...rowsOf(e).map((r) => r.join(","))].join("\n") + "\n";
}

function moduleOf(project: Project, e: Entity): string {
  const bug = project.bug.entity === e.name ? project.bug : null;
  const E = cap(e.name.replace(/s$/, ""));
  const cell = (k: number, field: string) => (bug?.kind === "shifted-cell" && bug.field === field ? k + 2 : k + 1);
  const lower = (field: string) => (bug?.kind === "zero-refused" && bug.field === field ? "> 0" : ">= 0");
  const term = bug?.kind === "floor" ? "Math.floor(record[field])" : "record[field]";
  return `// src/${e.name}.js: the ${e.name} of the ${project.title} project — parsing a CSV line, checking,
// totals and formatting. Every field but id is a number; money is in units with two decimals.
'use strict';

const FIELDS = ${JSON.stringify(["id", ...e.fields])};

/** One CSV line of data/${e.name}.csv as a record. */
function parse${E}(line) {
  const cells = line.split(',');
  return {
    id: Number(cells[0]),
${e.fields.map((f, k) => `    ${f}: Number(cells[${cell(k, f)}]),`).join("\n")}
  };
}

/** What is wrong with a record, as messages (none: it is valid). */
function check${E}(record) {
  const problems = [];
  if (!Number.isInteger(record.id) || record.id < 1) problems.push(\`id \${record.id} is not a whole number from 1\`);
${e.fields.map((f) => `  if (!(record.${f} ${lower(f)})) problems.push(\`${f} \${record.${f}} is not a number from 0\`);`).join("\n")}
  return problems;
}

/** The sum of one field over records, in record order. */
function total${E}(records, field) {
  let sum = 0;
  for (const record of records) sum += ${term};
  return sum;
}

/** A record as one line: each field as name=value. */
function format${E}(record) {
  return FIELDS.map((field) => \`\${field}=\${record[field]}\`).join(' ');
}

module.exports = { FIELDS, parse${E}, check${E}, total${E}, format${E} };
`;
}

/** The test runner: checks every row of every entity (or those named), then each field's total. */
function runnerOf(project: Project): string {
  const expected: Record<string, Record<string, string>> = {};
  for (const e of project.entities) {
    const rows = rowsOf(e);
    expected[e.name] = Object.fromEntries(e.fields.map((f, k) => {
      let sum = 0;
      for (const r of rows) sum += r[k + 1]!;
      return [f, sum.toFixed(2)];
    }));
  }
  return `// test/run.js: checks every record of data/ with its module, then each field's total against
// the figures below (from the spreadsheet). Usage: node test/run.js [ENTITY...]
'use strict';
const fs = require('fs');
const path = require('path');

const EXPECTED = ${JSON.stringify(expected, null, 2)};

const only = process.argv.slice(2);
let n = 0;
let failed = 0;
for (const entity of Object.keys(EXPECTED)) {
  if (only.length > 0 && !only.includes(entity)) continue;
  const mod = require(path.join(__dirname, '..', 'src', entity + '.js'));
  const name = Object.keys(mod).find((k) => k.startsWith('parse')).slice('parse'.length);
  const lines = fs.readFileSync(path.join(__dirname, '..', 'data', entity + '.csv'), 'utf8').trim().split('\\n').slice(1);
  const records = lines.map((line) => mod['parse' + name](line));
  for (const record of records) {
    const problems = mod['check' + name](record);
    n += 1;
    if (problems.length === 0) console.log(\`ok \${n} - \${entity} \${record.id}\`);
    else {
      failed += 1;
      console.log(\`not ok \${n} - \${entity} \${record.id}: \${problems.join('; ')}\`);
      console.log(\`  # \${mod['format' + name](record)}\`);
    }
  }
  for (const [field, want] of Object.entries(EXPECTED[entity])) {
    const got = mod['total' + name](records, field).toFixed(2);
    n += 1;
    if (got === want) console.log(\`ok \${n} - \${entity} total \${field} = \${want}\`);
    else {
      failed += 1;
      console.log(\`not ok \${n} - \${entity} total \${field}: got \${got}, expected \${want}\`);
    }
  }
}
console.log(\`1..\${n}\`);
console.log(\`# pass \${n - failed}\`);
console.log(\`# fail \${failed}\`);
process.exitCode = failed === 0 ? 0 : 1;
`;
}

function readmeOf(project: Project): string {
  return `# ${project.title}

A small record-keeping project: one module per kind of record in \`src/\`, the records in
\`data/\` as CSV, and \`test/run.js\`, which checks every record and the totals (TAP output).

${project.entities.map((e) => `- \`${e.name}\`: ${["id", ...e.fields].join(", ")} (${e.rows} records)`).join("\n")}

Run the checks with \`node test/run.js\`, or \`node test/run.js ENTITY...\` for some of them.
`;
}

function filesOf(project: Project): Record<string, string> {
  const files: Record<string, string> = {
    "README.md": readmeOf(project),
    "package.json": JSON.stringify({ name: project.title, version: "1.0.0", private: true, scripts: { test: "node test/run.js" } }, null, 2) + "\n",
    "test/run.js": runnerOf(project),
  };
  for (const e of project.entities) {
    files[`src/${e.name}.js`] = moduleOf(project, e);
    files[`data/${e.name}.csv`] = csvOf(e);
  }
  return files;
}

// --- the scripted agent ----------------------------------------------------------------------

/** Escapes text for a basic regular expression (sed's `s|old|new|`, old side). */
const sedOld = (s: string) => s.replace(/[\\.*[\]^$|]/g, (c) => `\\${c}`);
const sedNew = (s: string) => s.replace(/[\\&|]/g, (c) => `\\${c}`);
const singleQuoted = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

interface Step { say: string; command?: string }

/** The fix's old and new text in the buggy module, and where to look for it. */
function fixOf(project: Project): { file: string; old: string; new: string; grep: string; why: string } {
  const bug = project.bug;
  const e = project.entities.find((x) => x.name === bug.entity)!;
  const file = `src/${e.name}.js`;
  switch (bug.kind) {
    case "floor":
      return { file, old: "sum += Math.floor(record[field]);", new: "sum += record[field];", grep: "Math.floor", why: "the total floors every value, so each record loses its cents" };
    case "shifted-cell": {
      const k = e.fields.indexOf(bug.field);
      return { file, old: `${bug.field}: Number(cells[${k + 2}]),`, new: `${bug.field}: Number(cells[${k + 1}]),`, grep: "cells\\[", why: `\`${bug.field}\` is read from cell ${k + 2}, ${k + 2 > e.fields.length ? "past the last column" : "which belongs to the next column"}` };
    }
    case "zero-refused":
      return { file, old: `if (!(record.${bug.field} > 0))`, new: `if (!(record.${bug.field} >= 0))`, grep: "> 0", why: `\`${bug.field}\` must be above 0 where every other field may be 0` };
  }
}

function scriptOf(project: Project): Step[] {
  const fix = fixOf(project);
  const names = project.entities.map((e) => e.name);
  const steps: Step[] = [
    { say: "I start with the layout of the project.", command: "ls && ls src test data" },
    { say: "The README says how the project is meant to work.", command: "cat README.md" },
    { say: "Now the project's own checks, to see what fails.", command: "node test/run.js" },
    ...project.detours,
    { say: "I read the module the failures point at, then its neighbours.", command: `cat ${fix.file}` },
    ...names.filter((n) => `src/${n}.js` !== fix.file).map((n) => ({ say: `For comparison, src/${n}.js.`, command: `cat src/${n}.js` })),
    { say: "A look at the data behind the failing records.", command: `head -n 25 data/${project.bug.entity}.csv` },
    { say: "How big is each data file?", command: "wc -l data/*.csv" },
    { say: "Where else does the suspicious code appear?", command: `grep -n ${singleQuoted(fix.grep)} src/*.js` },
    { say: `Found it: ${fix.why}. I fix that line.`, command: `sed -i ${singleQuoted(`s|${sedOld(fix.old)}|${sedNew(fix.new)}|`)} ${fix.file}` },
    { say: "The changed function, to be sure the edit is what I meant.", command: `grep -n -F -A 3 -B 3 ${singleQuoted(fix.new)} ${fix.file}` },
    { say: "Now the checks again.", command: "node test/run.js" },
    { say: "All pass. One last look that no other module has the same problem.", command: `grep -c ${singleQuoted(fix.grep)} src/*.js` },
    { say: `Fixed ${fix.file}: ${fix.why}; it now reads \`${fix.new}\`. \`node test/run.js\` passes for every record and total; the data is unchanged.` },
  ];
  return steps;
}

function taskYaml(project: Project): string {
  const script = scriptOf(project).map((s) => ({ say: s.say, ...(s.command !== undefined ? { call: "shell", input: { command: s.command } } : {}) }));
  return JSON.stringify({
    prompt: project.prompt,
    workspace: { from: `fixtures/${project.id}` },
    policy: { version: 1, default: "allow", sandbox: "off", rules: [] },
    model: { provider: "scripted", script },
    limits: { maxSteps: 100, timeout: "5m" },
    transcript: { budgetTokens: 1_000_000 },
    checks: [{ name: "tests", run: "node test/run.js" }],
  }, null, 2) + "\n";
}

// --- the corpus files ------------------------------------------------------------------------

/** A fixed think time before each step, in seconds since the session's start. */
function scheduleOf(project: Project, messages: readonly Message[]): Record<string, number> {
  const next = numbers(`${project.id}/times`);
  const times: Record<string, number> = {};
  let at = 1.5 + (next() % 2000) / 1000;
  let step = 0;
  let lastOutputChars = 0;
  for (const m of messages) {
    if (m.role === "user") {
      lastOutputChars = m.content.reduce((n, b) => n + (b.type === "tool_result" ? b.content.length : 0), 0);
      continue;
    }
    step += 1;
    if (step > 1) at += 2 + (next() % 9000) / 1000 + Math.min(lastOutputChars / 2000, 30);
    if (project.pauseAfterStep !== undefined && step === project.pauseAfterStep + 1) at += 420;
    times[String(step)] = Math.round(at * 1000) / 1000;
  }
  return times;
}

/** A session's lines in the corpus format, with the machine's facts replaced by fixed ones. */
function corpusLines(system: string, messages: readonly Message[]): string[] {
  const workspace = /^Workspace: (.*)$/m.exec(system)?.[1];
  const fixed = (text: string) => (workspace ? text.split(workspace).join("/workspace") : text);
  const lines: object[] = [{
    role: "system",
    content: fixed(system)
      .replace(/^Platform: .*$/m, "Platform: linux")
      .replace(/^Shell: .*$/m, "Shell: /bin/bash")
      .replace(/^Date: .*$/m, "Date: 2026-01-05"),
    tool_name: null, tool_args: null, tool_result: null,
  }];
  let step = 0;
  for (const m of messages) {
    for (const b of m.content) {
      if (m.role === "user" && b.type === "text") lines.push({ role: "user", content: fixed(b.text), tool_name: null, tool_args: null, tool_result: null });
      if (b.type === "tool_result") {
        const text = fixed(typeof b.content === "string" ? b.content : JSON.stringify(b.content));
        lines.push({ role: "tool", content: text, tool_name: "bash", tool_args: null, tool_result: text });
      }
    }
    if (m.role !== "assistant") continue;
    step += 1;
    const text = m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
    const call = m.content.find((b) => b.type === "tool_call");
    const command = call && call.type === "tool_call" ? (call.input as { command: string }).command : null;
    lines.push({ role: "assistant", content: fixed(text), tool_name: command === null ? null : "bash", tool_args: command === null ? null : { command }, tool_result: null, step });
  }
  return lines.map((l, idx) => JSON.stringify({ ...l, idx }));
}

function run(args: string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    // The C locale: `ls`, `sort` and the rest order and print the same on every machine.
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: cliEnv({ LC_ALL: "C", LANG: "C" }), stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => done({ code, stderr }));
  });
}

/** Runs the suite and writes the corpus into `out` (its .jsonl and .times.json files replaced). */
export async function makeCorpus(out: string): Promise<string[]> {
  const scratch = await mkdtemp(join(tmpdir(), "rhema-corpus-"));
  try {
    const suite = join(scratch, "corpus");
    for (const project of PROJECTS) {
      for (const [rel, text] of Object.entries(filesOf(project))) {
        const path = join(suite, "fixtures", project.id, rel);
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, text);
      }
      await writeFile(join(suite, `${project.id}.yaml`), taskYaml(project));
    }
    const runDir = join(scratch, "run");
    const result = await run(["run", "corpus", "--out", runDir, "--sandbox", "off", "--concurrency", "2"], scratch);
    if (result.code !== 0) throw new Error(`make-corpus: the scripted suite did not pass (exit ${result.code}):\n${result.stderr}`);
    const sessions = await readRunDirSessions(runDir);
    await mkdir(out, { recursive: true });
    for (const f of await readdir(out)) if (f.endsWith(".jsonl") || f.endsWith(".times.json")) await rm(join(out, f));
    const written: string[] = [];
    for (const project of PROJECTS) {
      const recorded = sessions.find((s) => s.id === project.id);
      if (!recorded) throw new Error(`make-corpus: no session recorded for ${project.id}`);
      const { system, messages } = recorded.session;
      await writeFile(join(out, `${project.id}.jsonl`), corpusLines(system ?? "", messages).join("\n") + "\n");
      await writeFile(join(out, `${project.id}.times.json`), JSON.stringify(scheduleOf(project, messages)) + "\n");
      written.push(`${project.id}.jsonl`);
    }
    return written;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const out = resolve(process.argv[2] ?? corpusDir);
  const files = await makeCorpus(out);
  console.log(`wrote ${files.length} sessions to ${out}: ${files.join(", ")}`);
}
