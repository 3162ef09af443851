/**
 * The policy file's schema (docs/design.md §4, docs/policy.md), in zod: `version`, `default`, ordered `rules`, each an
 * `allow` or a `deny` with matchers `tools`, `paths`, `shell` and an optional `reason`, and the
 * sandbox the policy asks for (`sandbox`, `network`). Unknown keys are errors. The published JSON Schema (schema/policy.schema.json) is generated from it.
 */
import { z } from "zod";
import { globProblem } from "../match/path-glob.js";
import { ShellPatternError, compileShellPattern } from "../match/shell-pattern.js";

const toolName = z.string().min(1, "a tool name cannot be empty");

const pathGlob = z.string().superRefine((glob, ctx) => {
  const problem = globProblem(glob);
  if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
});

const shellPattern = z.string().superRefine((pattern, ctx) => {
  try {
    compileShellPattern(pattern);
  } catch (err) {
    if (!(err instanceof ShellPatternError)) throw err;
    ctx.addIssue({ code: "custom", message: `bad shell pattern \`${pattern}\`: ${err.message}` });
  }
});

export const ruleMatchersSchema = z
  .strictObject({
    tools: z.array(toolName).min(1).optional().describe("Tool names the rule applies to, e.g. [write_file, edit_file]."),
    paths: z.array(pathGlob).min(1).optional().describe("Globs relative to the workspace, e.g. \"src/**\"."),
    shell: z.array(shellPattern).min(1).optional().describe("Shell command patterns, word by word: \"npm test\", \"git diff *\"."),
    reason: z.string().min(1).optional().describe("Said to the model when this rule denies a call."),
  })
  .refine((m) => m.tools !== undefined || m.paths !== undefined || m.shell !== undefined, {
    message: "a rule needs at least one matcher: tools, paths or shell",
  });

export const ruleSchema = z
  .strictObject({
    allow: ruleMatchersSchema.optional(),
    deny: ruleMatchersSchema.optional(),
  })
  .refine((r) => (r.allow === undefined) !== (r.deny === undefined), {
    message: "a rule is either `allow: {…}` or `deny: {…}`, exactly one of them",
  });

export const policyFileSchema = z
  .strictObject({
    version: z.literal(1).describe("The policy format version; 1."),
    default: z
      .enum(["allow", "deny"], { error: "expected allow or deny (headless nobody can be asked: what is not allowed is denied)" })
      .describe("What happens to a call no rule decides. Headless there is no \"ask\"."),
    rules: z.array(ruleSchema).describe("Ordered rules; deny beats allow."),
    sandbox: z
      .enum(["auto", "bwrap", "off"], { error: "expected auto, bwrap or off" })
      .optional()
      .describe("The OS sandbox for the commands of tasks under this policy: auto (bwrap when it works, else unsandboxed, said loudly), bwrap (required: the run fails with exit 3 without it), off. The strictest of --sandbox, this and the task's `sandbox:` wins (off < auto < bwrap)."),
    network: z
      .enum(["allow", "deny"], { error: "expected allow or deny" })
      .optional()
      .describe("Network for the shell tool and checks inside the sandbox (default deny); setup commands always have the host's network."),
  })
  .describe("rhema policy file: decides every tool call of a headless run.");

export type PolicyFileContent = z.infer<typeof policyFileSchema>;
export type RuleMatchers = z.infer<typeof ruleMatchersSchema>;

type JsonObject = Record<string, unknown>;

/**
 * The JSON Schema for editors, as committed in schema/policy.schema.json. The refinements zod
 * cannot export (exactly one of allow/deny; at least one matcher) are added by hand.
 */
export function policyJsonSchema(): JsonObject {
  const schema = z.toJSONSchema(policyFileSchema, { target: "draft-2020-12" }) as JsonObject;
  const rule = ((schema.properties as JsonObject).rules as JsonObject).items as JsonObject;
  Object.assign(rule, { minProperties: 1, maxProperties: 1 });
  for (const effect of ["allow", "deny"]) {
    const matchers = (rule.properties as JsonObject)[effect] as JsonObject;
    matchers.anyOf = [{ required: ["tools"] }, { required: ["paths"] }, { required: ["shell"] }];
  }
  return { ...schema, title: "rhema policy" };
}
