import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { TaskFileError, loadTaskFile, parseTaskSource, type TaskDefinition } from "../../../src/runner/tasks/task-file.js";
import { parse as parseYaml } from "yaml";
import { contentHash } from "../../../src/runner/tasks/content-hash.js";
import { taskFileSchema } from "../../../src/runner/tasks/task-schema.js";
import { chooseScript } from "../../../src/providers/script-choice.js";
import { repoRoot } from "../../support/paths.js";
import { DEFAULT_CHANGES_EXCLUDE, changesSettings, patternPathspecs } from "../../../src/runner/tasks/changes-settings.js";
import { tempDir } from "../../support/temp-dir.js";

const fixtures = join(repoRoot, "test/runner/fixtures");

/** The content-v2 hash of a task file, from its schema-checked YAML. */
async function contentHashOf(file: string): Promise<string> {
  return contentHash(taskFileSchema.parse(parseYaml(await readFile(file, "utf8"))));
}

async function sha256Of(file: string): Promise<string> {
  return createHash("sha256").update(await readFile(file)).digest("hex");
}

describe("task files: valid examples", () => {
  test("the first design's task example resolves to the whole expected definition", async () => {
    const file = join(fixtures, "suites/arithmetic/fix-add.yaml");
    const expected: TaskDefinition = {
      id: "fix-add",
      suite: "arithmetic",
      file,
      contentHash: await contentHashOf(file),
      fileBytesHash: await sha256Of(file),
      idPosition: { line: 2, column: 5 },
      prompt: "Make `npm test` pass by fixing src/add.js.",
      images: [join(fixtures, "suites/arithmetic/shots/failing.png")],
      workspace: { from: join(fixtures, "workspaces/add"), setup: ["npm ci"] },
      policy: { kind: "file", path: join(fixtures, "suites/policies/ci.yaml") },
      model: { provider: "anthropic", name: "claude-sonnet-4-6" },
      limits: { maxSteps: 40, timeoutMs: 600_000 },
      transcript: { blockTokens: 8000, budgetTokens: 100000 },
      checks: [{ name: "unit tests", run: "npm test", line: 12 }],
      tags: ["nightly"],
    };
    assert.deepStrictEqual(await loadTaskFile(file), expected);
  });

  test("a scripted task defaults id and suite and keeps an inline policy with its position", async () => {
    const file = join(fixtures, "suites/scripted/echo.yml");
    const expected: TaskDefinition = {
      id: "echo",
      suite: "scripted",
      file,
      contentHash: await contentHashOf(file),
      fileBytesHash: await sha256Of(file),
      idPosition: { line: 1, column: 1 },
      prompt: "Write hello to out.txt, then say done.",
      images: [],
      workspace: { from: null, setup: [] },
      policy: {
        kind: "inline",
        data: { default: "deny", rules: [{ allow: { tools: ["write_file", "read_file", "list_dir"] } }] },
        file,
        line: 16,
        column: 3,
        positions: {
          default: { line: 16, column: 12 },
          rules: { line: 18, column: 5 },
          "rules.0": { line: 18, column: 7 },
          "rules.0.allow": { line: 18, column: 14 },
          "rules.0.allow.tools": { line: 18, column: 23 },
          "rules.0.allow.tools.0": { line: 18, column: 24 },
          "rules.0.allow.tools.1": { line: 18, column: 36 },
          "rules.0.allow.tools.2": { line: 18, column: 47 },
        },
      },
      model: {
        provider: "scripted",
        script: [
          { call: "write_file", input: { path: "out.txt", content: "hello" } },
          { calls: [{ call: "read_file", input: { path: "out.txt" } }, { call: "list_dir" }] },
          { fail: { status: 529, retryable: true, times: 1 }, say: "done" },
        ],
      },
      limits: { maxSteps: 5, timeoutMs: 90_000 },
      checks: [{ name: "file written", run: 'test "$(cat out.txt)" = hello', timeoutMs: 1_500, line: 21 }],
      tags: ["smoke", "offline"],
    };
    assert.deepStrictEqual(await loadTaskFile(file), expected);
  });

  test("a minimal task has empty defaults and no optional keys", () => {
    const task = parseTaskSource("prompt: hi\n", "/suites/basic/hello.yaml");
    assert.deepStrictEqual(task, {
      id: "hello",
      suite: "basic",
      file: "/suites/basic/hello.yaml",
      contentHash: contentHash({ prompt: "hi" }),
      fileBytesHash: createHash("sha256").update("prompt: hi\n").digest("hex"),
      idPosition: { line: 1, column: 1 },
      prompt: "hi",
      images: [],
      workspace: { from: null, setup: [] },
      policy: null,
      model: null,
      limits: {},
      checks: [],
      tags: [],
    } satisfies TaskDefinition);
  });

  test("a byte-order mark and CRLF line ends are accepted; the file-bytes hash is of the raw bytes", () => {
    const bytes = Buffer.from("\uFEFFprompt: hi\r\nid: crlf\r\n", "utf8");
    const task = parseTaskSource(bytes, "/s/x.yaml");
    assert.equal(task.id, "crlf");
    assert.equal(task.idPosition.line, 2);
    assert.equal(task.fileBytesHash, createHash("sha256").update(bytes).digest("hex"));
    assert.equal(task.contentHash, contentHash({ prompt: "hi", id: "crlf" }));
  });

  test("durations: minutes, seconds, hours, milliseconds and bare seconds", () => {
    const timeouts = ["10m", "90s", "1h", "1500ms", "90", "1.5"].map(
      (t) => parseTaskSource(`prompt: p\nlimits: { timeout: ${t} }\n`, "/s/t.yaml").limits.timeoutMs,
    );
    assert.deepStrictEqual(timeouts, [600_000, 90_000, 3_600_000, 1_500, 90_000, 1_500]);
  });

  test("limits.timeout and limits.streamIdle take none (no limit) and long durations; a check's timeout does not take none", () => {
    const limits = (text: string) => parseTaskSource(`prompt: p\nlimits: ${text}\n`, "/s/t.yaml").limits;
    assert.deepStrictEqual(limits("{ timeout: none, streamIdle: none }"), { timeoutMs: Infinity, streamIdleMs: Infinity });
    assert.deepStrictEqual(limits("{ timeout: 1000h, streamIdle: 30s }"), { timeoutMs: 3_600_000_000, streamIdleMs: 30_000 });
    const err = asTaskFileError(thrownBy(() => parseTaskSource("prompt: p\nlimits: { streamIdle: never }\nchecks:\n  - { name: c, run: 'true', timeout: none }\n", "/s/t.yaml")));
    assert.deepStrictEqual(err.problems.map((p) => p.field), ["limits.streamIdle", "checks.0.timeout"]);
    assert.match(err.problems[0]!.message, /or none/);
  });

  test("scripts alternatives are kept with their pick; script is the first trial's, as chooseScript picks it", () => {
    const source = (pick: string) => `prompt: p\nseed: 7\nmodel:\n  provider: scripted\n${pick}  scripts:\n    - { script: [{ say: a }], weight: 2 }\n    - script: [{ say: b }]\n`;
    const byRepeat = parseTaskSource(source("  pick: repeat\n"), "/s/suite/t.yaml");
    assert.deepStrictEqual(byRepeat.model, {
      provider: "scripted",
      pick: "repeat",
      scripts: [{ script: [{ say: "a" }], weight: 2 }, { script: [{ say: "b" }] }],
      script: [{ say: "a" }],
    });
    assert.equal(byRepeat.seed, "7");
    const drawn = parseTaskSource(source(""), "/s/suite/t.yaml");
    assert.ok(drawn.model?.provider === "scripted");
    assert.deepStrictEqual(drawn.model.script, chooseScript(drawn.model, "7", { suite: "suite", id: "t", variant: null, repeat: 1 }));
    assert.deepStrictEqual(chooseScript(drawn.model, drawn.seed!, { suite: "suite", id: "t", variant: null, repeat: 1 }), drawn.model.script);
  });

  test("every problem in a file is reported, in file order", () => {
    const err = asTaskFileError(thrownBy(() => parseTaskSource("limits: { maxSteps: 0 }\nbogus: 1\n", "/s/t.yaml")));
    assert.deepStrictEqual(err.problems.map((p) => `${p.line}:${p.column} ${p.field}`), ["1:1 prompt", "1:21 limits.maxSteps", "2:1 bogus"]);
  });
});

interface MalformedCase {
  name: string;
  source: string;
  /** Other files the task refers to, relative to the suite folder. */
  files?: Record<string, string>;
  fileName?: string;
  at: [line: number, column: number];
  field: string;
  message: RegExp;
}

const malformed: MalformedCase[] = [
  { name: "unclosed quote (reported where it opens)", source: 'id: x\nprompt: "unclosed\ntags: [a]\n', at: [2, 9], field: "yaml", message: /unclosed quote/ },
  { name: "tab indentation", source: "prompt: x\n\tid: y\n", at: [2, 1], field: "yaml", message: /Tabs/ },
  { name: "an unknown sandbox mode", source: "prompt: x\nsandbox: always\n", at: [2, 10], field: "sandbox", message: /sandbox: expected sandbox as auto, bwrap or off$/ },
  { name: "duplicate key", source: "prompt: a\nprompt: b\n", at: [2, 1], field: "yaml", message: /unique/ },
  { name: "unclosed flow sequence", source: "prompt: hi\ntags: [a, b\n", at: [3, 1], field: "yaml", message: /Flow sequence/ },
  { name: "two documents in one file", source: "prompt: a\n---\nprompt: b\n", at: [2, 1], field: "yaml", message: /multiple documents/ },
  { name: "alias without anchor", source: "prompt: *nope\n", at: [1, 9], field: "yaml", message: /alias/ },
  { name: "empty file", source: "", at: [1, 1], field: "prompt", message: /empty/ },
  { name: "a list instead of a mapping", source: "- prompt: a\n", at: [1, 1], field: "(task)", message: /mapping/ },
  { name: "unknown top-level key", source: "prompt: hi\ntimeout: 10m\n", at: [2, 1], field: "timeout", message: /unknown key; expected one of: id, suite, prompt/ },
  { name: "unknown nested key (typo)", source: "prompt: hi\nlimits:\n  maxStep: 3\n", at: [3, 3], field: "limits.maxStep", message: /expected one of: maxSteps, timeout/ },
  { name: "missing prompt", source: "id: x\n", at: [1, 1], field: "prompt", message: /required/ },
  { name: "blank prompt", source: 'prompt: "  "\n', at: [1, 9], field: "prompt", message: /empty/ },
  { name: "prompt of the wrong type", source: "prompt: [a]\n", at: [1, 9], field: "prompt", message: /string/ },
  { name: "id with a space", source: 'id: "bad id"\nprompt: x\n', at: [1, 5], field: "id", message: /letters, digits/ },
  { name: "file name unfit for a default id", fileName: "bad name.yaml", source: "prompt: x\n", at: [1, 1], field: "id", message: /set id: explicitly/ },
  { name: "bad timeout string", source: "prompt: x\nlimits: { timeout: 10 minutes }\n", at: [2, 20], field: "limits.timeout", message: /duration such as "10m"/ },
  { name: "zero timeout", source: "prompt: x\nlimits:\n  timeout: 0\n", at: [3, 12], field: "limits.timeout", message: /above 0/ },
  { name: "negative maxSteps", source: "prompt: x\nlimits:\n  maxSteps: -1\n", at: [3, 13], field: "limits.maxSteps", message: /at least 1/ },
  { name: "fractional maxSteps", source: "prompt: x\nlimits: { maxSteps: 2.5 }\n", at: [2, 21], field: "limits.maxSteps", message: /whole number/ },
  { name: "unknown provider", source: "prompt: x\nmodel: { provider: mistral, name: x }\n", at: [2, 20], field: "model.provider", message: /scripted, anthropic, openai, openai-responses, gemini, anthropic-bedrock, anthropic-vertex or cassette/ },
  { name: "cassette model without a path", source: "prompt: x\nmodel:\n  provider: cassette\n", at: [3, 3], field: "model.path", message: /required/ },
  { name: "remote model without a name", source: "prompt: x\nmodel:\n  provider: openai\n", at: [3, 3], field: "model.name", message: /required/ },
  { name: "baseUrl not an http URL", source: "prompt: x\nmodel: { provider: openai, name: m, baseUrl: ftp://h }\n", at: [2, 46], field: "model.baseUrl", message: /http/ },
  { name: "script on a remote model", source: "prompt: x\nmodel:\n  provider: anthropic\n  name: m\n  script: []\n", at: [5, 3], field: "model.script", message: /expected one of: provider, name, baseUrl/ },
  { name: "scripted model without a script", source: "prompt: x\nmodel:\n  provider: scripted\n", at: [3, 3], field: "model.script", message: /required/ },
  { name: "empty script", source: "prompt: x\nmodel:\n  provider: scripted\n  script: []\n", at: [4, 11], field: "model.script", message: /empty/ },
  { name: "misspelt step key", source: "prompt: x\nmodel:\n  provider: scripted\n  script:\n    - sya: hi\n", at: [5, 7], field: "model.script.0.sya", message: /expected one of: say, call/ },
  { name: "call and calls together", source: "prompt: x\nmodel:\n  provider: scripted\n  script:\n    - call: a\n      calls: [{ call: b }]\n", at: [6, 14], field: "model.script.0.calls", message: /exclude each other/ },
  { name: "empty step", source: "prompt: x\nmodel:\n  provider: scripted\n  script:\n    - {}\n", at: [5, 7], field: "model.script.0", message: /at least one of say, call, calls, fail/ },
  { name: "input without call", source: "prompt: x\nmodel:\n  provider: scripted\n  script:\n    - say: hi\n      input: {}\n", at: [6, 14], field: "model.script.0.input", message: /belongs to a call/ },
  { name: "calls entry without a tool", source: "prompt: x\nmodel:\n  provider: scripted\n  script:\n    - calls: [{ input: {} }]\n", at: [5, 15], field: "model.script.0.calls.0.call", message: /required/ },
  { name: "negative reasoningTokens", source: "prompt: x\nmodel:\n  provider: scripted\n  script:\n    - say: hi\n      reasoningTokens: -5\n", at: [6, 24], field: "model.script.0.reasoningTokens", message: /cannot be negative/ },
  { name: "reasoningTokens as a word", source: "prompt: x\nmodel:\n  provider: scripted\n  script:\n    - { say: hi, reasoningTokens: lots }\n", at: [5, 35], field: "model.script.0.reasoningTokens", message: /whole number of tokens/ },
  { name: "script and scripts together", source: "prompt: x\nmodel:\n  provider: scripted\n  script: [{ say: a }]\n  scripts:\n    - script: [{ say: b }]\n", at: [6, 5], field: "model.scripts", message: /script and scripts exclude each other/ },
  { name: "empty scripts", source: "prompt: x\nmodel:\n  provider: scripted\n  scripts: []\n", at: [4, 12], field: "model.scripts", message: /scripts is empty/ },
  { name: "scripts as a mapping", source: "prompt: x\nmodel:\n  provider: scripted\n  scripts: { script: [] }\n", at: [4, 12], field: "model.scripts", message: /list of \{script, weight\}/ },
  { name: "an alternative with an empty script", source: "prompt: x\nmodel:\n  provider: scripted\n  scripts:\n    - script: [{ say: a }]\n    - script: []\n", at: [6, 15], field: "model.scripts.1.script", message: /alternative's script is empty/ },
  { name: "an alternative without a script", source: "prompt: x\nmodel:\n  provider: scripted\n  scripts:\n    - weight: 2\n", at: [5, 7], field: "model.scripts.0.script", message: /required/ },
  { name: "an alternative's misspelt key", source: "prompt: x\nmodel:\n  provider: scripted\n  scripts:\n    - scrpt: [{ say: a }]\n", at: [5, 7], field: "model.scripts.0.scrpt", message: /did you mean `script`/ },
  { name: "an empty step in an alternative", source: "prompt: x\nmodel:\n  provider: scripted\n  scripts:\n    - script:\n        - {}\n", at: [6, 11], field: "model.scripts.0.script.0", message: /at least one of say, call, calls, fail/ },
  { name: "zero weight", source: "prompt: x\nmodel:\n  provider: scripted\n  scripts:\n    - script: [{ say: a }]\n      weight: 0\n", at: [6, 15], field: "model.scripts.0.weight", message: /above 0/ },
  { name: "negative weight", source: "prompt: x\nmodel:\n  provider: scripted\n  scripts:\n    - { script: [{ say: a }], weight: -1 }\n", at: [5, 39], field: "model.scripts.0.weight", message: /above 0/ },
  { name: "weight as a word", source: "prompt: x\nmodel:\n  provider: scripted\n  scripts:\n    - { script: [{ say: a }], weight: lots }\n", at: [5, 39], field: "model.scripts.0.weight", message: /number above 0/ },
  { name: "pick without scripts", source: "prompt: x\nmodel:\n  provider: scripted\n  script: [{ say: a }]\n  pick: repeat\n", at: [5, 9], field: "model.pick", message: /pick chooses among scripts/ },
  { name: "unknown pick", source: "prompt: x\nmodel:\n  provider: scripted\n  pick: random\n  scripts:\n    - script: [{ say: a }]\n", at: [4, 9], field: "model.pick", message: /draw or repeat/ },
  { name: "a seed too long for a number", source: "prompt: x\nseed: 12345678901234567890\n", at: [2, 7], field: "seed", message: /up to 9007199254740991 .*quote a longer one/ },
  { name: "fractional seed", source: "prompt: x\nseed: 1.5\n", at: [2, 7], field: "seed", message: /string or a whole number/ },
  { name: "check without a command", source: "prompt: x\nchecks:\n  - name: t\n", at: [3, 5], field: "checks.0.run", message: /required/ },
  { name: "duplicate check names", source: "prompt: x\nchecks:\n  - { name: t, run: a }\n  - { name: t, run: b }\n", at: [4, 13], field: "checks.1.name", message: /duplicate check name/ },
  { name: "bad check timeout", source: "prompt: x\nchecks:\n  - { name: t, run: a, timeout: soon }\n", at: [3, 33], field: "checks.0.timeout", message: /duration/ },
  { name: "tag with a space", source: "prompt: x\ntags: [a b]\n", at: [2, 8], field: "tags.0", message: /one word/ },
  { name: "setup as a string", source: "prompt: x\nworkspace: { setup: npm ci }\n", at: [2, 21], field: "workspace.setup", message: /list of commands/ },
  { name: "changes.exclude as a string", source: "prompt: x\nworkspace:\n  changes: { exclude: dist }\n", at: [3, 23], field: "workspace.changes.exclude", message: /list of path patterns/ },
  { name: "a changes pattern that climbs out", source: "prompt: x\nworkspace:\n  changes:\n    include: [../secrets]\n", at: [4, 15], field: "workspace.changes.include.0", message: /does not climb out/ },
  { name: "a negated changes pattern", source: "prompt: x\nworkspace:\n  changes:\n    exclude: [\"!keep\"]\n", at: [4, 15], field: "workspace.changes.exclude.0", message: /use include:/ },
  { name: "zero changes.maxBytes", source: "prompt: x\nworkspace:\n  changes: { maxBytes: 0 }\n", at: [3, 24], field: "workspace.changes.maxBytes", message: /at least 1/ },
  { name: "a misspelt changes key", source: "prompt: x\nworkspace:\n  changes: { includes: [a] }\n", at: [3, 14], field: "workspace.changes.includes", message: /did you mean `include`/ },
  { name: "zero blockTokens", source: "prompt: x\ntranscript: { blockTokens: 0 }\n", at: [2, 28], field: "transcript.blockTokens", message: /at least 1/ },
  { name: "unknown cacheTtl", source: "prompt: x\ntranscript:\n  cacheTtl: 2h\n", at: [3, 13], field: "transcript.cacheTtl", message: /expected cacheTtl 5m, 1h or auto/ },
  { name: "policy of the wrong type", source: "prompt: x\npolicy: 3\n", at: [2, 9], field: "policy", message: /policy file path or an inline policy/ },
  { name: "missing workspace.from folder", source: "prompt: x\nworkspace:\n  from: ./nowhere\n", at: [3, 9], field: "workspace.from", message: /folder not found: .*nowhere/ },
  { name: "workspace.from is a file", files: { "plain.txt": "x" }, source: "prompt: x\nworkspace: { from: plain.txt }\n", at: [2, 20], field: "workspace.from", message: /not a folder/ },
  { name: "both workspace.from and workspace.git", files: { "fx/a.txt": "x" }, source: "prompt: x\nworkspace:\n  from: fx\n  git: repo\n  ref: main\n", at: [4, 8], field: "workspace.git", message: /from and git exclude each other/ },
  { name: "workspace.git without a ref", source: "prompt: x\nworkspace:\n  git: https://example.com/r.git\n", at: [3, 8], field: "workspace.git", message: /git needs ref/ },
  { name: "an empty workspace.ref", source: "prompt: x\nworkspace:\n  git: https://example.com/r.git\n  ref: \"\"\n", at: [4, 8], field: "workspace.ref", message: /workspace.ref is empty/ },
  { name: "an option-like workspace.ref", source: "prompt: x\nworkspace:\n  git: https://example.com/r.git\n  ref: --upload-pack=x\n", at: [4, 8], field: "workspace.ref", message: /no leading -/ },
  { name: "workspace.ref without git", source: "prompt: x\nworkspace: { ref: main }\n", at: [2, 19], field: "workspace.ref", message: /ref belongs to git/ },
  { name: "workspace.git a folder that is no repository", files: { "plain/a.txt": "x" }, source: "prompt: x\nworkspace: { git: plain, ref: main }\n", at: [2, 19], field: "workspace.git", message: /not a git repository .*plain/ },
  { name: "workspace.git a path that does not exist", source: "prompt: x\nworkspace: { git: ../nowhere, ref: main }\n", at: [2, 19], field: "workspace.git", message: /repository not found: .*nowhere/ },
  { name: "missing image", source: "prompt: x\nimages:\n  - shots/none.png\n", at: [3, 5], field: "images.0", message: /image not found/ },
  { name: "image of an unsupported type", files: { "notes.txt": "x" }, source: "prompt: x\nimages: [notes.txt]\n", at: [2, 10], field: "images.0", message: /png, jpeg, gif or webp/ },
  { name: "missing policy file", source: "prompt: x\npolicy: ../policies/none.yaml\n", at: [2, 9], field: "policy", message: /policy file not found/ },
];

describe("task files: malformed files give located errors", () => {
  test("there are at least 25 cases", () => assert.ok(malformed.length >= 25, `${malformed.length} cases`));

  for (const c of malformed) {
    test(c.name, async (t) => {
      const suiteDir = join(await tempDir(t), "suite");
      await mkdir(suiteDir, { recursive: true });
      for (const [rel, content] of Object.entries(c.files ?? {})) {
        await mkdir(dirname(join(suiteDir, rel)), { recursive: true });
        await writeFile(join(suiteDir, rel), content);
      }
      const file = join(suiteDir, c.fileName ?? "task.yaml");
      await writeFile(file, c.source);
      const err = asTaskFileError(await loadTaskFile(file).then(() => null, (e: unknown) => e));
      const [line, column] = c.at;
      assert.deepStrictEqual({ file: err.file, line: err.line, column: err.column, field: err.field }, { file, line, column, field: c.field });
      const firstLine = err.message.split("\n")[0]!;
      assert.ok(firstLine.startsWith(`${file}:${line}:${column}: ${c.field}: `), firstLine);
      assert.match(firstLine, c.message);
      assert.equal(err.code, "task_invalid");
    });
  }
});

function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  return null;
}

function asTaskFileError(err: unknown): TaskFileError {
  assert.ok(err instanceof TaskFileError, `expected a TaskFileError, got ${String(err)}`);
  return err;
}

describe("task files: image bytes and size caps", () => {
  const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
  const problemOf = async (file: string, caps?: Parameters<typeof loadTaskFile>[1]): Promise<string> => {
    const err = await loadTaskFile(file, caps).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof TaskFileError, String(err));
    return err.message;
  };

  test("a PNG named .gif is a located error that says what the bytes are", async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, "shot.gif"), PNG);
    await writeFile(join(dir, "task.yaml"), "prompt: look\nimages: [shot.gif]\n");
    assert.equal(await problemOf(join(dir, "task.yaml")), `${join(dir, "task.yaml")}:2:10: images.0: the image is a png but is named as a gif: rename it .png: ${join(dir, "shot.gif")}`);
  });

  test("bytes that are no supported image are a located error", async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, "shot.png"), "not an image at all");
    await writeFile(join(dir, "task.yaml"), "prompt: look\nimages: [shot.png]\n");
    assert.match(await problemOf(join(dir, "task.yaml")), /task\.yaml:2:10: images\.0: not a png, jpeg, gif or webp image \(by its bytes\)/);
  });

  test("a prompt or an image over its cap is a located error; the caps can be raised", async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, "shot.png"), Buffer.concat([PNG, Buffer.alloc(100)]));
    await writeFile(join(dir, "task.yaml"), `prompt: ${"x".repeat(300 * 1024)}\nimages: [shot.png]\n`);
    const message = await problemOf(join(dir, "task.yaml"), { maxPromptBytes: 256 * 1024, maxImageBytes: 64 });
    assert.deepEqual(message.split("\n").map((line) => line.replace(dir, "DIR").split(": ").slice(0, 2).join(": ")), [
      "DIR/task.yaml:1:9: prompt",
      "DIR/task.yaml:2:10: images.0",
    ]);
    assert.match(message, /the prompt is 307200 bytes, over the 262144-byte cap \(raise it with RHEMA_MAX_PROMPT_BYTES\)/);
    assert.match(message, /the image is 116 bytes, over the 64-byte cap/);
    const raised = await loadTaskFile(join(dir, "task.yaml"), { maxPromptBytes: 1024 * 1024, maxImageBytes: 1024 });
    assert.equal(raised.images.length, 1);
  });
});

test("workspace.changes: the defaults with the task's excludes added, its includes and cap; absent when the file says nothing", () => {
  const task = parseTaskSource("prompt: x\nworkspace:\n  changes: { exclude: [\"*.log\", dist/], include: [package-lock.json], maxBytes: 2048 }\n", "/s/t.yaml");
  assert.deepEqual(task.workspace.changes, { exclude: [...DEFAULT_CHANGES_EXCLUDE, "*.log"], include: ["package-lock.json"], maxBytes: 2048 });
  assert.equal(parseTaskSource("prompt: x\n", "/s/t.yaml").workspace.changes, undefined);
  assert.deepEqual(changesSettings(undefined), { exclude: [...DEFAULT_CHANGES_EXCLUDE], include: [], maxBytes: 1024 * 1024 });
  assert.deepEqual(patternPathspecs("node_modules/"), ["**/node_modules/**"]);
  assert.deepEqual(patternPathspecs("go.sum"), ["**/go.sum", "**/go.sum/**"]);
  assert.deepEqual(patternPathspecs("src/gen"), ["src/gen", "src/gen/**"]);
});

test("a task file's sandbox: is kept as written, and absent when it says nothing", () => {
  assert.equal(parseTaskSource("prompt: x\nsandbox: off\n", "/t/s/a.yaml").sandbox, "off");
  assert.equal("sandbox" in parseTaskSource("prompt: x\n", "/t/s/a.yaml"), false);
});
