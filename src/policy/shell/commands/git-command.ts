/**
 * git as a deny rule must see it. Global options before the subcommand (`-C x`, `-c k=v`,
 * `--git-dir=…`, `--no-pager`, …) are taken out, so `git -P --work-tree=. push` is matched as
 * `git push`; a subcommand git does not have could be an alias (`git p`), so a deny pattern
 * treats it as "could be anything". Configuration that makes git run a program or rewrite a
 * subcommand — `-c alias.x=…`, `core.sshCommand`, `core.pager`, `diff.external`,
 * `core.hooksPath`, `credential.helper`, `git config alias.x …` and the like — and
 * `--exec-path=DIR` make the command unjudgeable: only a rule naming it allows it.
 * `git-push` under git's own folder (`/usr/lib/git-core/git-push`) is `git push`.
 */
import { type ShellWord, literalWord, runtimeWord } from "../grammar/shell-words.js";

export interface GitView {
  /** `git SUB ARGS…` without the global options; null when there was nothing to take out. */
  normalized: ShellWord[] | null;
  blocker: string | null;
  unjudgeable: string | null;
  /** Directories git runs in (`-C DIR`), outermost first. */
  directories: ShellWord[];
  /** Paths given to global options (`--git-dir`, `--work-tree`), which git reads. */
  paths: ShellWord[];
  /** What an allowing pattern must spell to allow the unjudgeable configuration (the key). */
  mustName: string[];
}

const SUBCOMMANDS = new Set(`add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr
check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit
commit-graph commit-tree config count-objects credential credential-cache credential-store daemon describe diagnose diff
diff-files diff-index diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg
for-each-ref for-each-repo format-patch fsck gc get-tar-commit-id grep gui hash-object help hook http-backend index-pack
init instaweb interpret-trailers lfs log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base
merge-file merge-index merge-one-file merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes pack-objects
pack-redundant pack-refs patch-id prune prune-packed pull push range-diff read-tree rebase receive-pack reflog refs
remote repack replace replay request-pull rerere reset restore rev-list rev-parse revert rm send-email send-pack
shortlog show show-branch show-index show-ref sparse-checkout stage stash status stripspace submodule switch
symbolic-ref tag unpack-file unpack-objects update-index update-ref update-server-info upload-archive upload-pack var
verify-commit verify-pack verify-tag version whatchanged worktree write-tree`.split(/\s+/));

const GLOBAL_FLAGS = new Set([
  "-p", "--paginate", "-P", "--no-pager", "--no-replace-objects", "--no-lazy-fetch", "--no-optional-locks", "--no-advice",
  "--bare", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "-v", "--version",
  "-h", "--help", "--html-path", "--man-path", "--info-path", "--exec-path",
]);
const GLOBAL_WITH_VALUE = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--list-cmds", "--attr-source", "--super-prefix"]);

/** Configuration keys that make git run a program, load other configuration, or rename a subcommand. */
const RUNS_PROGRAM = new RegExp(
  "^(alias\\..+|include\\.path|includeif\\..+|core\\.(sshcommand|pager|editor|hookspath|fsmonitor|askpass|gitproxy|" +
  "alternaterefscommand|worktree)|diff\\.(external|.+\\.(command|textconv))|merge\\..+\\.driver|filter\\..+|" +
  "credential(\\..+)?\\.helper|sequence\\.editor|pager\\..+|gpg(\\..+)?\\.program|uploadpack\\.packobjectshook|" +
  "init\\.templatedir|remote\\..+\\.(uploadpack|receivepack|vcs|proxy)|url\\..+|protocol\\..+|imap\\.tunnel|" +
  "tar\\..+\\.command|difftool\\..+|mergetool\\..+|browser\\..+\\.(cmd|path)|man\\..+\\.(cmd|path)|web\\.browser|" +
  "interactive\\.difffilter|sendemail\\..+|submodule\\..+|core\\.sshcommand|ssh\\.variant|http\\..*proxy|" +
  "trace2\\..+|fsmonitor\\..+|hook\\..+)$",
  "i",
);

/** True when setting configuration `key` can make git run something else. */
export function gitKeyRunsProgram(key: string): boolean {
  return RUNS_PROGRAM.test(key.trim());
}

/** `git-push` (a git subcommand by its program name) as `["git", "push"]`, or null. */
export function gitProgramName(word: ShellWord | undefined): ShellWord[] | null {
  if (word === undefined || word.kind !== "literal") return null;
  const base = word.value.split("/").pop() ?? "";
  const match = /^git-(.+)$/.exec(base);
  if (match === null || !SUBCOMMANDS.has(match[1]!)) return null;
  return [literalWord("git"), literalWord(match[1]!)];
}

/** Reads git's global options; `argv[0]` is git. */
export function readGit(argv: readonly ShellWord[]): GitView {
  const view: GitView = { normalized: null, blocker: null, unjudgeable: null, directories: [], paths: [], mustName: [] };
  let i = 1;
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.kind !== "literal") {
      if (i === 1 || !word.value.startsWith("-")) break;
      view.unjudgeable = `\`git ${word.raw}\` could be an option that makes git run another program`;
      return view;
    }
    const text = word.value;
    if (!text.startsWith("-")) break;
    const eq = text.indexOf("=");
    const name = text.startsWith("--") && eq > 0 ? text.slice(0, eq) : text;
    if (name === "--exec-path" && eq > 0) {
      view.unjudgeable = `\`${text}\` makes git run its subcommands from another folder`;
      view.mustName.push("--exec-path=");
      return view;
    }
    if (GLOBAL_FLAGS.has(text)) continue;
    let value: ShellWord | undefined;
    if (GLOBAL_WITH_VALUE.has(name)) {
      value = eq > 0 && name.startsWith("--") ? literalWord(text.slice(eq + 1)) : /^-[Cc]./.test(text) ? literalWord(text.slice(2)) : argv[++i];
    } else if (/^-[Cc]./.test(text)) {
      value = literalWord(text.slice(2));
    } else {
      view.blocker = `cannot see through \`git\`: unknown option \`${text}\` before the subcommand`;
      return view;
    }
    if (value === undefined) return view;
    const problem = globalValueProblem(name, value, view);
    if (problem !== null) {
      view.unjudgeable = problem;
      return view;
    }
  }
  const rest = argv.slice(i);
  const sub = rest[0];
  const unknownSub = sub !== undefined && sub.kind === "literal" && !SUBCOMMANDS.has(sub.value);
  if (unknownSub) {
    // Not a git command: an alias (defined in a config file this line cannot see) could make it anything.
    view.normalized = [argv[0]!, runtimeWord(`${sub.raw} (a git alias?)`), ...rest.slice(1)];
  } else if (i > 1) {
    view.normalized = [argv[0]!, ...rest];
  }
  const config = sub?.value === "config" ? gitConfigProblem(rest) : null;
  if (config !== null) {
    view.unjudgeable = config.reason;
    view.mustName.push(config.key);
  }
  return view;
}

function globalValueProblem(name: string, value: ShellWord, view: GitView): string | null {
  if (name === "-C") view.directories.push(value);
  if (name === "--git-dir" || name === "--work-tree") view.paths.push(value);
  if (name !== "-c" && name !== "--config-env") return null;
  if (value.kind !== "literal") return `\`git ${name} ${value.raw}\` sets configuration known only at run time`;
  const key = value.value.split("=")[0]!;
  if (!gitKeyRunsProgram(key)) return null;
  view.mustName.push(key);
  return `\`git ${name} ${value.value}\` sets \`${key}\`, which makes git run another program or command`;
}

const CONFIG_VERBS = new Set(["set", "unset", "get", "list", "edit", "rename-section", "remove-section"]);
const CONFIG_VALUE_OPTIONS = new Set(["-f", "--file", "--blob", "--type", "--default", "--comment", "--value"]);

/** `git config [--file F] KEY VALUE` (or `git config set KEY VALUE`) that sets a key running a program; or opens an editor. */
function gitConfigProblem(rest: readonly ShellWord[]): { reason: string; key: string } | null {
  const operands: ShellWord[] = [];
  for (let i = 1; i < rest.length; i++) {
    const word = rest[i]!;
    if (word.kind === "literal" && (word.value === "-e" || word.value === "--edit" || word.value === "edit")) {
      return { reason: "`git config --edit` opens an editor", key: word.value };
    }
    if (word.kind === "literal" && CONFIG_VALUE_OPTIONS.has(word.value)) { i++; continue; }
    if (word.kind === "literal" && word.value.startsWith("-")) continue;
    operands.push(word);
  }
  const verb = operands[0]?.kind === "literal" && CONFIG_VERBS.has(operands[0].value) ? operands.shift() : undefined;
  const key = operands[0];
  if (key === undefined) return null;
  const sets = operands.length > 1 || verb?.value === "set";
  if (!sets) return null;
  if (key.kind !== "literal") return { reason: `\`git config ${key.raw} …\` sets a key known only at run time`, key: key.raw };
  return gitKeyRunsProgram(key.value) ? { reason: `\`git config ${key.value} …\` sets a key that makes git run another program or command`, key: key.value } : null;
}
