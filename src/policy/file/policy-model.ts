/**
 * A policy ready to decide with: validated rules with their globs and shell patterns compiled,
 * each labelled with where it was written (`rule 4 (policy.yaml:12)`), so every decision can
 * name its rule.
 */
import { compileGlobs } from "../match/path-glob.js";
import type { PolicyFileContent, RuleMatchers } from "./policy-schema.js";
import { type ShellPattern, compileShellPattern } from "../match/shell-pattern.js";

export type RuleEffect = "allow" | "deny";

export interface PolicyRule {
  /** 1-based position among the rules. */
  index: number;
  effect: RuleEffect;
  tools: readonly string[] | null;
  paths: readonly string[] | null;
  /** Matches workspace-relative paths against `paths`; null when the rule has none. */
  matchPath: ((path: string) => boolean) | null;
  shell: readonly ShellPattern[] | null;
  reason: string | null;
  /** Names the rule in decisions: `rule 4 (policy.yaml:12)`. */
  label: string;
}

export interface Policy {
  version: 1;
  default: RuleEffect;
  rules: readonly PolicyRule[];
  /** Where the policy came from, as shown in labels: `policy.yaml`, `preset:ci`. */
  source: string;
  /** Names the default in decisions: `default (policy.yaml)`. */
  defaultLabel: string;
  /** The OS sandbox the policy asks for (auto | bwrap | off); null when it says nothing. */
  sandbox: "auto" | "bwrap" | "off" | null;
  /** Network for the shell tool and checks in the sandbox; null when the policy says nothing (deny). */
  network: "allow" | "deny" | null;
}

export interface CompileOptions {
  /** Shown in labels, e.g. the file's name. */
  source: string;
  /** The line each rule starts on (1-based), by rule position; omitted lines are left out of labels. */
  ruleLines?: readonly (number | undefined)[];
}

function compileRule(effect: RuleEffect, matchers: RuleMatchers, index: number, options: CompileOptions): PolicyRule {
  const line = options.ruleLines?.[index - 1];
  return {
    index,
    effect,
    tools: matchers.tools ?? null,
    paths: matchers.paths ?? null,
    matchPath: matchers.paths ? compileGlobs(matchers.paths) : null,
    shell: matchers.shell ? matchers.shell.map(compileShellPattern) : null,
    reason: matchers.reason ?? null,
    label: `rule ${index} (${line === undefined ? options.source : `${options.source}:${line}`})`,
  };
}

/** Compiles validated file content; patterns and globs were checked by the schema. */
export function compilePolicy(content: PolicyFileContent, options: CompileOptions): Policy {
  const rules = content.rules.map((rule, i) => {
    const effect: RuleEffect = rule.allow !== undefined ? "allow" : "deny";
    return compileRule(effect, (rule.allow ?? rule.deny)!, i + 1, options);
  });
  return {
    version: 1, default: content.default, rules, source: options.source, defaultLabel: `default (${options.source})`,
    sandbox: content.sandbox ?? null, network: content.network ?? null,
  };
}
