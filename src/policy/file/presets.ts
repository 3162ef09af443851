/**
 * Built-in policies, loadable by name (`preset:read-only`, `preset:workspace-write`,
 * `preset:ci`). They are written as policy YAML and go through the same loader as a user's
 * file, so their rules carry labels like `rule 3 (preset:ci:14)`.
 *
 * - `read-only`: look, never touch: the read tools and read-only shell commands, whose
 *   operands must lie inside the workspace.
 * - `workspace-write`: read-only plus edits anywhere in the workspace (except .git/), shell
 *   redirections included, and `mkdir`/`touch` inside it.
 * - `ci`: workspace-write plus the usual build and test commands of npm, node, python, make,
 *   go and cargo. These run code from the workspace, which the agent can edit: `ci` trusts the
 *   sandbox the job runs in, not the model.
 */
import { type LoadedPolicy, parsePolicyText } from "./policy-file.js";

export const PRESET_NAMES = ["read-only", "workspace-write", "ci"] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

const READ_ONLY_SHELL = [
  "ls *", "cat *", "head *", "tail *", "wc *", "pwd", "echo *", "printf *", "true", "false",
  "grep *", "rg *", "find *", "diff *", "stat *", "du *", "basename *", "dirname *", "realpath *",
  "which *", "cd *", "sort *", "git status *", "git diff *", "git log *", "git show *",
  "git rev-parse *", "git ls-files *", "git blame *", "git branch --show-current",
];

/** Read-only commands that still write or delete through an option. */
const WRITING_OPTIONS = [
  "find ** -delete **", "find ** -fprint* **", "find ** -fls **", "sort ** -o* **", "sort ** --output* **",
  "git ** --output* **",
];

const quote = (items: readonly string[]): string => items.map((i) => JSON.stringify(i)).join(", ");

function header(description: string): string {
  return `# ${description}\nversion: 1\ndefault: deny\nrules:\n`;
}

// With `paths`, every operand must lie inside the workspace: `cat ~/.ssh/id_rsa`, `ls /`,
// `cd ..` are refused like read_file outside it would be.
const READ_ONLY_RULES = `  - allow: { tools: [read_file, list_dir, glob, grep] }
  - allow: { shell: [${quote(READ_ONLY_SHELL)}], paths: ["**"] }
  - deny: { shell: [${quote(WRITING_OPTIONS)}], reason: "this option makes a read-only command write or delete files" }
  - deny: { paths: ["**/.env"], reason: "secrets in .env files stay out of the transcript" }
`;

const WRITE_RULES = `  - allow: { tools: [write_file, edit_file], paths: ["**"] }
  - allow: { shell: ["mkdir *", "touch *"], paths: ["**"] }
  - deny: { tools: [write_file, edit_file, shell], paths: [".git/**"], reason: "the repository's .git folder is not for editing" }
`;

const CI_SHELL = [
  "npm test *", "npm run *", "npm ci *", "npm install *", "npm ls *", "npx tsc *", "node *",
  "python *", "python3 *", "pytest *", "pip install *", "make *", "go build *", "go test *",
  "go vet *", "go run *", "go fmt *", "gofmt *", "cargo build *", "cargo test *", "cargo check *",
  "cargo run *", "cargo fmt *", "cargo clippy *", "tsc *",
];

const CI_RULES = `  - allow: { shell: [${quote(CI_SHELL)}] }
  - deny: { shell: ["git ** push **", "npm ** publish **", "cargo ** publish **", "twine *"], reason: "nothing is pushed or published from CI" }
`;

const PRESET_TEXT: Readonly<Record<PresetName, string>> = {
  "read-only": header("rhema preset read-only: look, never touch") + READ_ONLY_RULES,
  "workspace-write": header("rhema preset workspace-write: edit inside the workspace") + READ_ONLY_RULES + WRITE_RULES,
  ci: header("rhema preset ci: edit, build and test") + READ_ONLY_RULES + WRITE_RULES + CI_RULES,
};

export function isPresetName(name: string): name is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(name);
}

/** The YAML of a preset, e.g. to show or to start a policy file from. */
export function presetText(name: PresetName): string {
  return PRESET_TEXT[name];
}

/** A built-in policy by name. */
export function presetPolicy(name: PresetName): LoadedPolicy {
  return parsePolicyText(PRESET_TEXT[name], `preset:${name}`, { label: `preset:${name}` });
}
