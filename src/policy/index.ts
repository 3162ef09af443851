/** The policy module's public face: loading policies, deciding calls, and the Approval adapter. */
export { loadBashParser, type BashParser } from "./bash-parser.js";
export { decide, type PolicyDecision } from "./decide.js";
export { SHELL_ANALYSIS, WORKSPACE_BOUNDARY } from "./policy-decision.js";
export { loadPolicy, PRESET_PREFIX } from "./load-policy.js";
export { PolicyApproval, type PolicyApprovalOptions, type PolicyDenial } from "./policy-approval.js";
export {
  PolicyFileError, formatPolicyIssue, loadPolicyFile, parsePolicyText, parsePolicyValue,
  type InlinePolicyOptions,
  type LoadedPolicy, type PolicyIssue, type PolicyWarning,
} from "./policy-file.js";
export type { Policy, PolicyRule, RuleEffect } from "./policy-model.js";
export { policyFileSchema, policyJsonSchema, type PolicyFileContent } from "./policy-schema.js";
export { PRESET_NAMES, isPresetName, presetPolicy, presetText, type PresetName } from "./presets.js";
export { analyzeShell, type ShellAnalysis, type SimpleCommand } from "./shell-analysis.js";
export { resolveShellPaths, resolveShellPathsLexically, type ShellFacts } from "./shell-paths.js";
