/** The policy module's public face: loading policies, deciding calls, and the Approval adapter. */
export { loadBashParser, type BashParser } from "./shell/grammar/bash-parser.js";
export { decide, type PolicyDecision } from "./decide/decide.js";
export { SHELL_ANALYSIS, WORKSPACE_BOUNDARY } from "./decide/policy-decision.js";
export { loadPolicy, PRESET_PREFIX } from "./file/load-policy.js";
export { PolicyApproval, type PolicyApprovalOptions, type PolicyDenial } from "./decide/policy-approval.js";
export {
  PolicyFileError, formatPolicyIssue, loadPolicyFile, parsePolicyText, parsePolicyValue,
  type InlinePolicyOptions,
  type LoadedPolicy, type PolicyIssue, type PolicyWarning,
} from "./file/policy-file.js";
export type { Policy, PolicyRule, RuleEffect } from "./file/policy-model.js";
export { DENY_LIST_LIMIT, permissiveWarnings } from "./file/permissive-warnings.js";
export { policyFileSchema, policyJsonSchema, type PolicyFileContent } from "./file/policy-schema.js";
export { PRESET_NAMES, isPresetName, presetPolicy, presetText, type PresetName } from "./file/presets.js";
export { analyzeShell, type ShellAnalysis, type SimpleCommand } from "./shell/shell-analysis.js";
export { resolveShellPaths, resolveShellPathsLexically, type ShellFacts } from "./shell/shell-paths.js";
