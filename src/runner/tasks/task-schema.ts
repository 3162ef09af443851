/**
 * The task file's schema (docs/design.md §4, docs/tasks.md), as written on disk: one zod schema, strict at every
 * level (an unknown key is an error, so a typo never silently drops a setting), and the JSON
 * Schema published as `schema/task.schema.json` generated from it. Resolving defaults and
 * paths is task-file.ts's job; this module only says what a file may contain.
 *
 * Editors pick the JSON Schema up from a modeline at the top of a task file:
 *   # yaml-language-server: $schema=../../schema/task.schema.json
 */
import { z } from "zod";
import type { CacheTtlSetting } from "../../core/transcript-types.js";
import { NAMED_PROVIDERS, PROVIDER_NAMES, REPLAY_PROVIDERS, SCRIPTED_PROVIDERS, nameList } from "../../providers/provider-registry.js";
import { DURATION_PATTERN, NO_LIMIT, parseDurationMs } from "./duration.js";
import { MCP_REFERENCE_PATTERN, MCP_SERVER_NAME_PATTERN } from "../../mcp/mcp-config.js";

/**
 * The axes of a matrix file (`--matrix`, matrix-file.ts), in the order a variant id names them:
 * each overrides one task setting, unless the task pins it (`pin:`).
 */
export const MATRIX_AXES = ["model", "transcript", "limits", "policy", "sandbox", "env", "mcp"] as const;
export type MatrixAxis = (typeof MATRIX_AXES)[number];

/** The most trials a task may have (`repeats:`, `--repeats`). */
export const MAX_REPEATS = 1000;

/** Task ids and suite names become folder names in the run directory. */
export const TASK_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const TASK_NAME_RULE = "letters, digits, '.', '_' and '-', starting with a letter or digit";

const taskName = (what: string) =>
  z.string({ error: `expected a ${what} (${TASK_NAME_RULE})` })
    .max(100, { error: `a ${what} is at most 100 characters` })
    .regex(TASK_NAME_PATTERN, { error: `a ${what} uses ${TASK_NAME_RULE}` });

const nonEmptyText = (what: string) =>
  z.string({ error: `expected ${what} as a string` }).trim().min(1, { error: `${what} is empty` });

const DURATION_RULE = 'expected a duration such as "10m", "90s", "1h", "1500ms", or a number of seconds';
const durationSchema = z.union(
  [
    z.number().positive({ error: `${DURATION_RULE} above 0` }),
    z.string().regex(DURATION_PATTERN, { error: DURATION_RULE, abort: true }).refine((v) => parseDurationMs(v) !== null, { error: `${DURATION_RULE} (a finite one)` }),
  ],
  { error: DURATION_RULE },
).describe('A duration: "10m", "90s", "1h", "1500ms", or a number of seconds.');

const LIMIT_RULE = `${DURATION_RULE}, or none`;
const limitSchema = z.union([durationSchema, z.literal(NO_LIMIT)], { error: LIMIT_RULE })
  .describe('A limit: a duration ("10m", "90s", "1h", "1500ms", or a number of seconds), or "none" for no limit.');

const positiveInt = (what: string) =>
  z.number({ error: `expected ${what} as a whole number` })
    .int({ error: `expected ${what} as a whole number` })
    .positive({ error: `${what} must be at least 1` });

const scriptedCallSchema = z.strictObject({
  call: nonEmptyText("a tool name").describe("Tool name."),
  input: z.unknown().optional().describe("The tool call's input."),
});

/**
 * One step of a scripted model: one assistant message. At least one of `say`, `call`,
 * `calls`, `fail`; `call` and `calls` exclude each other; `input` goes with `call`.
 * Mirrors `ScriptStep` in src/providers/script.ts.
 */
export const scriptStepSchema = z.strictObject({
  say: z.string({ error: "expected say as a string" }).optional().describe("Assistant text."),
  call: nonEmptyText("a tool name").optional().describe("One tool call: the tool's name."),
  input: z.unknown().optional().describe("Input of the `call`."),
  calls: z.array(scriptedCallSchema, { error: "expected calls as a list of {call, input}" })
    .min(1, { error: "calls is empty" }).optional().describe("Several tool calls in one step."),
  fail: z.strictObject({
    status: z.number().int().min(100).max(599).optional(),
    message: z.string().optional(),
    retryable: z.boolean().optional(),
    times: positiveInt("fail.times").optional(),
  }).optional().describe("Make the request fail instead (`times` times, default always)."),
  chunkDelayMs: z.number().int().nonnegative().optional().describe("Delay between streamed chunks."),
  reasoningTokens: z.number({ error: "expected reasoningTokens as a whole number of tokens" })
    .int({ error: "expected reasoningTokens as a whole number of tokens" })
    .nonnegative({ error: "reasoningTokens cannot be negative" }).optional()
    .describe("Tokens the model reasoned before this message: added to its output tokens and reported as their reasoning part."),
}).superRefine((step, ctx) => {
  if (step.call !== undefined && step.calls !== undefined) {
    ctx.addIssue({ code: "custom", path: ["calls"], message: "call and calls exclude each other: use one" });
  }
  if (step.input !== undefined && step.call === undefined) {
    ctx.addIssue({ code: "custom", path: ["input"], message: "input belongs to a call: add call: TOOL" });
  }
  if (step.say === undefined && step.call === undefined && step.calls === undefined && step.fail === undefined) {
    ctx.addIssue({ code: "custom", path: [], message: "a step needs at least one of say, call, calls, fail" });
  }
}).meta({ id: "scriptStep" }); // one definition in the JSON Schema, referred to by `script` and each of `scripts`

const scriptSchema = (what: string) => z.array(scriptStepSchema, { error: `expected ${what} as a list of steps` })
  .min(1, { error: `${what} is empty: give at least one step` });

/** One alternative of `scripts`: a script and its weight in the draw. Mirrors `ScriptAlternative` in src/providers/script.ts. */
const scriptAlternativeSchema = z.strictObject({
  script: scriptSchema("an alternative's script").describe("What the model says in the trials that draw this alternative."),
  weight: z.number({ error: "expected weight as a number above 0" })
    .positive({ error: "weight must be above 0" })
    .max(1e9, { error: "weight is at most 1e9" }).optional()
    .describe("The alternative's share of the draw: weight ÷ the sum of weights (default 1)."),
});

/**
 * The scripted model: one `script`, or `scripts` alternatives (each trial plays one, chosen by
 * `pick`: src/providers/script-choice.ts). Exactly one of `script` and `scripts`; `pick` only with `scripts`.
 */
export const scriptedModelSchema = z.strictObject({
  provider: z.enum(SCRIPTED_PROVIDERS),
  script: scriptSchema("script").optional()
    .describe("What the model says, one assistant message per step. Excludes `scripts`."),
  scripts: z.array(scriptAlternativeSchema, { error: "expected scripts as a list of {script, weight}" })
    .min(1, { error: "scripts is empty: give at least one alternative {script: [steps]}" }).optional()
    .describe("Alternative scripts: each trial plays one, chosen by `pick` (repeats of the task can then pass and fail). Excludes `script`."),
  pick: z.enum(["draw", "repeat"], { error: "expected pick as draw or repeat" }).optional()
    .describe("How a trial's alternative is chosen: `draw` (default), a draw weighted by `weight` from a hash of the task's `seed` and the trial's key; `repeat`, alternative (repeat − 1) mod count."),
  priceAs: nonEmptyText("priceAs").optional()
    .describe("Price the script's requests as this model (e.g. claude-sonnet-4-6), so offline runs show realistic, simulated cost figures; absent, the task is unpriced."),
}).superRefine((model, ctx) => {
  if (model.script !== undefined && model.scripts !== undefined) {
    ctx.addIssue({ code: "custom", path: ["scripts"], message: "script and scripts exclude each other: use one" });
  }
  if (model.script === undefined && model.scripts === undefined) {
    ctx.addIssue({ code: "custom", path: ["script"], message: "required: a scripted model needs script (a list of steps) or scripts (alternatives)" });
  }
  if (model.pick !== undefined && model.scripts === undefined) {
    ctx.addIssue({ code: "custom", path: ["pick"], message: "pick chooses among scripts: add scripts, or drop pick" });
  }
});

export const remoteModelSchema = z.strictObject({
  provider: z.enum(NAMED_PROVIDERS),
  name: nonEmptyText("the model name").describe("The provider's model name, e.g. claude-sonnet-4-6."),
  baseUrl: z.url({ protocol: /^https?$/, error: "expected baseUrl as an http(s) URL" }).optional()
    .describe("A compatible server's base URL (Ollama, vLLM, llama.cpp, LM Studio)."),
});

/** A recorded model: the task is a strict replay of a cassette (`run --cassette`), with no key. */
export const cassetteModelSchema = z.strictObject({
  provider: z.enum(REPLAY_PROVIDERS),
  path: nonEmptyText("model.path")
    .describe("Relative to the task file: a folder of cassettes (as `run --cassette DIR` records them: trial n of this task answers from DIR/<suite>/<id>/<variant|default>/<n>.jsonl), or one cassette file that every trial of the task answers from. The recorded provider and model are the task's; a request with no recorded answer fails its trial (cassette_miss)."),
});

const modelSchema = z.discriminatedUnion("provider", [scriptedModelSchema, remoteModelSchema, cassetteModelSchema], {
  error: `expected provider: ${nameList(PROVIDER_NAMES)}`,
}).describe("The model; absent, the CLI's --provider/--model decide.");

const changesPatternSchema = z.string({ error: "expected a path pattern as a string" }).trim()
  .min(1, { error: "a path pattern is empty" })
  .refine((p) => !p.startsWith("/") && !p.split("/").includes(".."), { error: "a path pattern is relative to the workspace and does not climb out (no leading / or ..)" })
  .refine((p) => !p.startsWith(":") && !p.startsWith("!"), { error: "a path pattern may not start with : or ! (use include: to keep what exclude leaves out)" });

const patternList = (what: string) => z.array(changesPatternSchema, { error: `expected ${what} as a list of path patterns` });

/** `workspace.changes`: what the trial's changes.patch leaves out, keeps and how large it grows (changes-settings.ts). */
export const changesSchema = z.strictObject({
  exclude: patternList("changes.exclude").optional()
    .describe("Paths left out of changes.patch, on top of the defaults (lockfiles, node_modules/, build output): `name` a file or folder of that name at any depth, `name/` a folder at any depth, `a/b` a path from the workspace's root; `*` and `**` glob."),
  include: patternList("changes.include").optional()
    .describe("Paths kept in changes.patch although an exclude (or a default) matches them, e.g. [package-lock.json]. Same patterns as exclude."),
  maxBytes: positiveInt("changes.maxBytes").optional()
    .describe("The largest changes.patch in bytes (default 1048576): past it the patch ends at a file boundary with a marker line naming the files left out."),
});

/** A git ref as written: a commit SHA, a branch or a tag (no option-like or blank name). */
const gitRefSchema = nonEmptyText("workspace.ref")
  .refine((ref) => !ref.startsWith("-") && !/[\s\x00-\x1f\x7f]/.test(ref), { error: "a ref is a commit SHA, a branch or a tag: no leading - and no spaces or control characters" });

const workspaceSchema = z.strictObject({
  from: nonEmptyText("workspace.from").optional()
    .describe("Folder copied fresh into the task's workspace, relative to the task file. Excludes `git`."),
  git: nonEmptyText("workspace.git").optional()
    .describe("A git repository the workspace is cloned from, checked out at `ref` (detached): a URL (`https://…`, `ssh://…`, `git@host:path`, `file://…`; mirrored once per run directory under `git-mirrors/`, with the host's network) or a path to a repository, relative to the task file. Excludes `from`."),
  ref: gitRefSchema.optional()
    .describe("With `git`: the commit SHA, branch or tag checked out. A branch or tag is resolved to its commit on a trial's first run and recorded: a resume checks out the same commit even if the branch moved since."),
  setup: z.array(nonEmptyText("a setup command"), { error: "expected setup as a list of commands" })
    .optional().describe("Shell commands run in the fresh workspace before the agent starts."),
  shared: z.boolean({ error: "expected shared as true or false" }).optional()
    .describe("Run the setup once for every task and trial that names the same fixture, commands, allowed environment and sandbox (<out>/prepared/<hash>/); each trial gets its own copy of that prepared base. Default false: each trial runs its own setup."),
  changes: changesSchema.optional()
    .describe("The trial's changes.patch: the workspace against its state after setup ($RHEMA_CHANGES in checks)."),
}).superRefine((workspace, ctx) => {
  if (workspace.from !== undefined && workspace.git !== undefined) {
    ctx.addIssue({ code: "custom", path: ["git"], message: "from and git exclude each other: copy a folder or clone a repository, not both" });
  }
  if (workspace.git !== undefined && workspace.ref === undefined) {
    ctx.addIssue({ code: "custom", path: ["git"], message: "git needs ref: the commit SHA, branch or tag to check out" });
  }
  if (workspace.ref !== undefined && workspace.git === undefined) {
    ctx.addIssue({ code: "custom", path: ["ref"], message: "ref belongs to git: add git: URL-or-path, or drop ref" });
  }
});

const inlinePolicySchema = z.record(z.string(), z.unknown())
  .describe("An inline policy ({version, default, rules}); validated by the policy module.");

const policySchema = z.union([nonEmptyText("the policy path"), inlinePolicySchema], {
  error: "expected a policy file path or an inline policy {default, rules}",
}).describe("Policy file path (relative to the task file) or an inline policy.");

export const limitsSchema = z.strictObject({
  maxSteps: positiveInt("maxSteps").optional().describe("Cap on model steps in the turn."),
  timeout: limitSchema.optional().describe("Wall-clock limit of the whole task: setup, turn and checks (a check running when it fires is stopped as timed out, the rest are not run); `none`: no limit, whatever --timeout says."),
  streamIdle: limitSchema.optional().describe("The longest a model's stream may go without sending content (keep-alive pings do not count) before the request is ended as a retryable provider error (default: --stream-idle, else 5m); `none`: no limit."),
  maxCostUsd: z.number({ error: "expected maxCostUsd as a number of dollars" }).positive({ error: "maxCostUsd must be above 0" }).optional()
    .describe("Budget in dollars: once the task's requests (the compaction worker's and earlier runs' included) cost this much, the task stops before its next request, resumably (status stopped). Needs a priced model."),
  maxTokens: positiveInt("maxTokens").optional()
    .describe("Budget in tokens (input + cache reads + cache writes + output, the compaction worker's and earlier runs' included): reached, the task stops before its next request, resumably (status stopped)."),
});

export const transcriptSchema = z.strictObject({
  blockTokens: positiveInt("blockTokens").optional().describe("Target size of one section, in estimated tokens (default: a tenth of the budget, at most 8000)."),
  budgetTokens: positiveInt("budgetTokens").optional().describe("Requests are kept under this many estimated tokens by compacting old sections (default 100000)."),
  cacheTtl: z.enum(["5m", "1h", "auto"] satisfies CacheTtlSetting[], { error: "expected cacheTtl 5m, 1h or auto" }).optional()
    .describe("The TTL of the prompt-cache marks (Anthropic): 5m (default), 1h (every mark; writes cost 2× input instead of 1.25×), or auto (1h when a pause longer than 5 minutes is expected from this task's earlier gaps)."),
  worker: z.strictObject({
    provider: z.enum(NAMED_PROVIDERS),
    name: nonEmptyText("the worker model's name"),
  }).optional().describe("A cheaper model to write the compaction summaries; default the task's own model (the elider for scripted tasks)."),
});

const checkSchema = z.strictObject({
  name: nonEmptyText("the check's name"),
  run: nonEmptyText("the check's command").describe("Shell command; exit 0 passes. $RHEMA_FINAL_ANSWER names a file holding the agent's final answer; with `output:`, $RHEMA_OUTPUT names output.json, its structured answer. Runs again if a kill interrupted it: make it safe to repeat."),
  timeout: durationSchema.optional().describe("This check's own limit (default 5m)."),
});

const checksSchema = z.array(checkSchema, { error: "expected checks as a list of {name, run}" })
  .superRefine((checks, ctx) => {
    const seen = new Set<string>();
    checks.forEach((check, index) => {
      if (seen.has(check.name)) {
        ctx.addIssue({ code: "custom", path: [index, "name"], message: `duplicate check name "${check.name}"` });
      }
      seen.add(check.name);
    });
  });

const tagSchema = z.string({ error: "expected a tag as a string" })
  .regex(/^[^\s,]+$/, { error: "a tag is one word: no spaces or commas" });

/** The most repairs a task's `output.repairs` may ask for: each is one more model turn. */
export const MAX_OUTPUT_REPAIRS = 10;

/** `output`: the answer is JSON valid against a schema (docs/tasks.md "Structured output"). */
const outputSchema = z.strictObject({
  schema: z.union([
    nonEmptyText("output.schema (a JSON Schema file path)"),
    z.record(z.string(), z.unknown()),
  ], { error: "expected output.schema as a JSON Schema file path or an inline JSON Schema object" })
    .describe("The JSON Schema (2020-12, or draft-07 when its $schema says so) the answer must be valid against: a .json file relative to the task file, or an inline object. It describes an object (type: object): it is the input schema of the final_answer tool. Its content is in the content hash."),
  repairs: z.number({ error: "expected output.repairs as a whole number from 0" })
    .int({ error: "expected output.repairs as a whole number from 0" })
    .min(0, { error: "output.repairs cannot be negative" })
    .max(MAX_OUTPUT_REPAIRS, { error: `output.repairs is at most ${MAX_OUTPUT_REPAIRS}` }).optional()
    .describe("How many times an invalid answer is sent back with its validation errors before the trial errors (output_invalid); default 2."),
}).describe("Structured output: the agent's answer is JSON valid against `schema`, given through the final_answer tool (or as plain JSON text). It lands in result.json (`output`), output.json and $RHEMA_OUTPUT.");

/** An env or header value of an MCP server: text whose `${NAME}` references take `--allow-env` variables. */
const mcpValue = z.string({ error: "expected a string (text, with ${NAME} for the value of an --allow-env variable)" }).superRefine((text, ctx) => {
  const stray = text.replace(MCP_REFERENCE_PATTERN, "").indexOf("${");
  if (stray >= 0) ctx.addIssue({ code: "custom", message: "a reference is ${NAME}: a letter or _ first, then letters, digits and _" });
});
const mcpStartTimeout = durationSchema.optional().describe("How long the server may take to start, answer initialize and list its tools (default 30s); past it the trial errors mcp_start (retryable).");
const mcpStdioServer = z.strictObject({
  command: nonEmptyText("mcp command").describe("The server's program: installed by the task's setup (no npx at run time), run in the trial's sandbox with the policy's network."),
  args: z.array(z.string({ error: "expected an argument as a string" }), { error: "expected args as a list of strings" }).optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: "expected an environment variable name" }), mcpValue, { error: "expected env as a mapping of variable names to values" }).optional()
    .describe("Variables laid over the trial's (scrubbed) environment; ${NAME} takes an --allow-env variable's value."),
  startTimeout: mcpStartTimeout,
});
const mcpHttpServer = z.strictObject({
  url: z.string({ error: "expected url as an http(s) URL" }).regex(/^https?:\/\/[^\s]+$/, { error: "expected url as an http(s) URL" }).describe("The streamable-HTTP endpoint."),
  headers: z.record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { error: "expected a header name" }), mcpValue, { error: "expected headers as a mapping of header names to values" }).optional()
    .describe("Sent with every request; ${NAME} takes an --allow-env variable's value (Authorization: Bearer ${TOKEN})."),
  startTimeout: mcpStartTimeout,
});
const MCP_SERVER_RULE = "expected an MCP server as {command, args, env} (stdio) or {url, headers} (streamable HTTP)";
export const mcpSchema = z.record(
  z.string().regex(MCP_SERVER_NAME_PATTERN, { error: "expected an MCP server name: letters, digits, - and single _ (its tools are mcp__<server>__<tool>)" }),
  z.union([mcpStdioServer, mcpHttpServer], { error: MCP_SERVER_RULE }),
  { error: "expected mcp as a mapping of server names to servers" },
).describe("MCP servers whose tools the agent gets, as mcp__<server>__<tool>, decided by the policy like built-in tools. MCP config files in the workspace (.mcp.json …) are never read.");

/** The whole task file. */
/** A regular expression of `cassette.normalise`: one that compiles and matches something. */
const normalisePattern = z.string({ error: "expected a regular expression (JavaScript syntax) as text" }).superRefine((text, ctx) => {
  let pattern: RegExp;
  try {
    pattern = new RegExp(text, "g");
  } catch (err) {
    ctx.addIssue({ code: "custom", message: `not a regular expression: ${err instanceof Error ? err.message : String(err)}` });
    return;
  }
  if (pattern.test("")) ctx.addIssue({ code: "custom", message: `/${text}/ matches the empty string: it would mark every position of every request` });
});

const cassetteSchema = z.strictObject({
  normalise: z.array(normalisePattern, { error: "expected cassette.normalise as a list of regular expressions" })
    .describe("Regular expressions (JavaScript syntax): every match in this task's requests becomes <normalised> before a cassette keys them (run --cassette), beside the built-in rules (paths, instants, dates; durations and temporary paths in tool results). For what changes between runs without changing what was asked: a port, a PID, a random name."),
}).describe("How a cassette (run --cassette) keys this task's requests. Not in the content hash.");

export const taskFileSchema = z.strictObject({
  id: taskName("task id").optional().describe("Unique within its suite; default: the file name."),
  suite: taskName("suite name").optional().describe("Default: the task file's folder name."),
  prompt: nonEmptyText("prompt").describe("The input of the agent's turn."),
  images: z.array(nonEmptyText("an image path"), { error: "expected images as a list of paths" })
    .optional().describe("Images (png, jpeg, gif, webp) sent with the prompt; relative to the task file."),
  workspace: workspaceSchema.optional(),
  policy: policySchema.optional(),
  model: modelSchema.optional(),
  limits: limitsSchema.optional(),
  transcript: transcriptSchema.optional(),
  checks: checksSchema.optional().describe("Commands run in the workspace after the turn; all must pass."),
  output: outputSchema.optional(),
  tags: z.array(tagSchema, { error: "expected tags as a list of words" }).optional(),
  repeats: positiveInt("repeats").max(MAX_REPEATS, { error: `repeats is at most ${MAX_REPEATS}` }).optional()
    .describe("How many trials of the task run (default: --repeats, else 1); each has its own workspace, checkpoint and result. Not in the content hash: raising it on resume adds trials."),
  pass: z.strictObject({
    rate: z.number({ error: "expected pass.rate as a number from 0 to 1" }).gt(0, { error: "pass.rate must be above 0" }).max(1, { error: "pass.rate is at most 1" })
      .describe("The share of counted trials that must pass (judged on the rate, or with --gate lower on its Wilson 95 % lower bound)."),
  }).optional().describe("What makes a repeated task pass; absent: --min-pass-rate, else every counted trial must pass. Not in the content hash."),
  seed: z.union([z.string(), z.number().int({ error: "a number seed is a whole number up to 9007199254740991 (2^53 − 1): quote a longer one (seed: \"…\")" })], { error: "expected seed as a string or a whole number" }).optional()
    .describe("Seeds the scripted model's draw among its `scripts` alternatives: each trial's is a hash of the seed and the trial's key, so a resumed trial replays its alternative and the repeats draw independently (default \"\"; a number counts as its decimal text; in the content hash)."),
  pin: z.array(z.enum(MATRIX_AXES, { error: `expected a matrix axis: ${MATRIX_AXES.join(", ")}` }), { error: "expected pin as a list of matrix axes, e.g. [model]" }).optional()
    .describe("Matrix axes (--matrix) this task keeps its own setting for: a matrix overrides the task's settings on every other axis. Not in the content hash."),
  cassette: cassetteSchema.optional(),
  mcp: mcpSchema.optional(),
  sandbox: z.enum(["auto", "bwrap", "off"], { error: "expected sandbox as auto, bwrap or off" }).optional()
    .describe("The OS sandbox this task asks for; the strictest of --sandbox, the policy's `sandbox:` and this wins (off < auto < bwrap), so `off` here cannot switch off what the run or the policy asked for."),
}).meta({
  title: "rhema task",
  description: "One task of a rhema suite: a prompt, a workspace, a model, limits and checks.",
});

export type TaskFileContent = z.infer<typeof taskFileSchema>;

/**
 * The published JSON Schema of a task file (`schema/task.schema.json`). Constraints zod keeps
 * in refinements are added by hand where JSON Schema can say them, so editors flag them too.
 */
export function taskJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(taskFileSchema, {
    override: (ctx) => {
      if (ctx.zodSchema === scriptedModelSchema) {
        ctx.jsonSchema.oneOf = [{ required: ["script"] }, { required: ["scripts"] }];
        ctx.jsonSchema.dependentRequired = { pick: ["scripts"] };
      }
      if (ctx.zodSchema === workspaceSchema) {
        ctx.jsonSchema.not = { required: ["from", "git"] };
        ctx.jsonSchema.dependentRequired = { git: ["ref"], ref: ["git"] };
      }
      if (ctx.zodSchema === scriptStepSchema) {
        ctx.jsonSchema.anyOf = ["say", "call", "calls", "fail"].map((key) => ({ required: [key] }));
        ctx.jsonSchema.not = { required: ["call", "calls"] };
        ctx.jsonSchema.dependentRequired = { input: ["call"] };
      }
    },
  }) as Record<string, unknown>;
}
