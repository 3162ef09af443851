/**
 * What a policy cannot hold, said when it is loaded (`rhema policy check`, `rhema validate`
 * print these): a `default: allow` policy is a deny list, and no deny list can contain the
 * programs that run code given as data; an allow rule for such a program (`python3 *`,
 * `npm test`, `make *`) lets it run whatever the agent writes for it. Pure: the CLI prints.
 */
import type { Policy, PolicyRule } from "./policy-model.js";

/** Programs that run code they are given as data (arguments, files the agent can write, scripts). */
const RUNS_CODE = new Set([
  "node", "nodejs", "deno", "bun", "tsx", "ts-node", "python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "php", "lua",
  "Rscript", "julia", "java", "jshell", "awk", "gawk", "mawk", "nawk", "sed", "make", "gmake", "cmake", "ninja", "npm", "pnpm", "yarn",
  "npx", "pytest", "tox", "nox", "go", "cargo", "rustc", "gcc", "cc", "clang", "bash", "sh", "zsh", "dash", "ksh", "fish", "source",
  ".", "eval", "tar", "vim", "vi", "nvim", "emacs", "nano", "ed", "ex", "less", "expect", "tclsh", "gdb", "docker", "podman",
]);

export const DENY_LIST_LIMIT =
  "a deny list cannot contain programs that run code given as data (`python3 -c`, `node -e`, `perl -e`, `awk 'BEGIN { system(…) }'`, " +
  "`sed 'e …'`, `make`, `tar --checkpoint-action`, an editor, an `npm test` after the agent edited the scripts): the deny rules stop " +
  "only the commands they name, however they are disguised; use an allowlist (`default: deny`) and the OS sandbox (`sandbox: bwrap`)";

/** The program a rule's shell pattern names first, when it is one that runs code given as data. */
function codeRunners(rule: PolicyRule): string[] {
  if (rule.effect !== "allow" || rule.shell === null) return [];
  return rule.shell.flatMap((pattern) => {
    const first = pattern.words[0];
    const name = first === undefined || first.dynamic || first.star || first.anyWords ? null : (first.value.split("/").pop() ?? "");
    return name !== null && RUNS_CODE.has(name) ? [pattern.source] : [];
  });
}

/** The warnings for what `policy` cannot hold; empty when it holds what it says. */
export function permissiveWarnings(policy: Policy): string[] {
  const warnings: string[] = [];
  // An allowlist says what it allows: only a deny list is warned about (an allowed `npm test`
  // that runs edited scripts is the sandbox's to hold, and the README says so).
  if (policy.default !== "allow") return warnings;
  warnings.push(`${policy.defaultLabel}: \`default: allow\` makes this policy a deny list, and ${DENY_LIST_LIMIT}`);
  for (const rule of policy.rules) {
    const patterns = codeRunners(rule);
    if (patterns.length === 0) continue;
    const shown = patterns.slice(0, 4).map((p) => `\`${p}\``).join(", ") + (patterns.length > 4 ? ` and ${patterns.length - 4} more` : "");
    warnings.push(
      `${rule.label} allows ${shown}: ${patterns.length === 1 ? "this program runs" : "these programs run"} code given as data — ` +
      "arguments, and files the agent can write — so no rule sees what they do; only the OS sandbox (`sandbox: bwrap`) holds them",
    );
  }
  return warnings;
}
