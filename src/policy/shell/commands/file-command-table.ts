/**
 * The table of commands whose file operands and options are known: readers (`cat`, `grep`,
 * `sort`, …), writers (`tee`, `touch`, `rm`, …), copiers (`cp`, `mv`, `ln`, `rsync`), archivers
 * (`tar`, `zip`), fetchers (`curl`, `wget`) and git's file options. Each entry says which words
 * are files read or written and which folders are read whole. Data plus the few readers that do
 * not fit the spec shape (dd, tar, find, git).
 */
import {
  type CommandFiles, type FileCommandSpec, type FileUse, type TreeKind, afterPattern, copies, filesBySpec, readsAll, use, writesAll,
} from "./command-files.js";
import { type ParsedOptions, hasOption, optionValues, parseOptions } from "./command-options.js";
import { type ShellWord, literalWord } from "../grammar/shell-words.js";

const flagsOnly = { flags: "", withValue: "", stopAtOperand: false };
const gnu = (withValue: string, longWithValue: string[] = []) => ({ flags: "", withValue, longWithValue, stopAtOperand: false });
const reader = (withValue = "", longWithValue: string[] = []): FileCommandSpec => ({ options: gnu(withValue, longWithValue), operands: readsAll() });
/**
 * `ls`: with `-R` a folder's names, through its links with `-L`; with `-L` alone each entry of a
 * folder operand is looked at through its link (`ls -L dir` stats where dir's links lead);
 * `-d` lists the operand itself. `-H` follows only the operands, which are resolved anyway.
 */
function lsTree(parsed: ParsedOptions): TreeKind {
  const follow = hasOption(parsed, "L", "dereference");
  if (hasOption(parsed, "d", "directory")) return null;
  if (hasOption(parsed, "R", "recursive")) return follow ? "follow" : "names";
  return follow ? "entries" : null;
}

/** `chmod -R`, `chown -R`, `setfacl -R`: everything under the operands, through the links inside with `-L`. */
function changesTree(parsed: ParsedOptions): TreeKind {
  if (!hasOption(parsed, "R", "recursive")) return null;
  return hasOption(parsed, "L", "logical") ? "follow" : "content";
}

const GREP: FileCommandSpec = {
  options: gnu("efmABCdD", ["regexp", "file", "max-count", "after-context", "before-context", "context", "directories", "devices",
    "include", "exclude", "exclude-from", "exclude-dir", "label", "color", "colour", "binary-files"]),
  values: { f: "read", file: "read", "exclude-from": "read" },
  operands: afterPattern(["e", "regexp", "f", "file"], (operands, parsed) => {
    const follow = hasOption(parsed, "R", "dereference-recursive");
    const whole = follow || hasOption(parsed, "r", "recursive") || optionValues(parsed, "d", "directories").some((o) => o.value === "recurse");
    return readsAll(() => (follow ? "follow" : whole ? "content" : null), ".")(operands, parsed);
  }),
};

const RG: FileCommandSpec = {
  options: gnu("efgmABCtTjMEr", ["regexp", "file", "glob", "iglob", "max-count", "type", "type-not", "threads", "max-columns",
    "encoding", "replace", "ignore-file", "pre-glob", "type-add", "max-depth", "sort", "sortr", "context-separator", "color", "colors"]),
  values: { f: "read", file: "read", "ignore-file": "read" },
  runs: ["pre"],
  operands: (operands, parsed) => {
    const follow = hasOption(parsed, "L", "follow");
    const rest = hasOption(parsed, "e", "regexp", "f", "file", "files", "type-list") ? operands : operands.slice(1);
    return readsAll(() => (follow ? "follow" : "content"), ".")(rest, parsed);
  },
};

const SEARCHERS: FileCommandSpec = {
  options: gnu("ABCGmg", ["after", "before", "context", "file-search-regex", "max-count", "ignore", "depth"]),
  operands: afterPattern(["g", "f"], (operands, parsed) => readsAll(() => (hasOption(parsed, "f", "follow") ? "follow" : "content"), ".")(operands, parsed)),
};

const SED: FileCommandSpec = {
  options: { flags: "", withValue: "efl", optionalValue: "i", longWithValue: ["expression", "file", "line-length"], longOptionalValue: ["in-place"], stopAtOperand: false },
  values: { f: "read", file: "read" },
  operands: afterPattern(["e", "expression", "f", "file"], (operands, parsed) =>
    operands.map((w) => use(w, hasOption(parsed, "i", "in-place") ? "write" : "read"))),
};

const AWK: FileCommandSpec = {
  options: gnu("fvFi", ["file", "assign", "field-separator", "include"]),
  values: { f: "read", file: "read" },
  operands: afterPattern(["f", "file"], (operands) => operands.filter((w) => !/^[A-Za-z_]\w*=/.test(w.value)).map((w) => use(w, "read"))),
};

const SORT: FileCommandSpec = {
  options: gnu("kotST", ["key", "output", "field-separator", "buffer-size", "temporary-directory", "parallel", "batch-size",
    "files0-from", "random-source", "compress-program", "sort"]),
  values: { o: "write", output: "write", T: "write", "temporary-directory": "write", "files0-from": "read", "random-source": "read" },
  runs: ["compress-program"],
  operands: readsAll(),
};

const TEE: FileCommandSpec = { options: { flags: "", withValue: "", longOptionalValue: ["output-error"], stopAtOperand: false }, operands: writesAll() };

const CP: FileCommandSpec = {
  options: gnu("tS", ["target-directory", "suffix", "backup", "reflink", "preserve", "no-preserve", "sparse", "update", "context"]),
  operands: copies({}),
};
const MV: FileCommandSpec = { ...CP, operands: copies({ movesSources: true }) };
const LN: FileCommandSpec = { ...CP, operands: copies({ linkTargets: true }) };
const INSTALL: FileCommandSpec = {
  options: gnu("tSmogZ", ["target-directory", "suffix", "mode", "owner", "group", "strip-program", "backup", "context"]),
  runs: ["strip-program"],
  operands: (operands, parsed) => (hasOption(parsed, "d", "directory") ? operands.map((w) => use(w, "write")) : copies({})(operands, parsed)),
};

const RSYNC: FileCommandSpec = {
  options: gnu("eBfT", ["rsh", "rsync-path", "exclude", "include", "exclude-from", "include-from", "files-from", "log-file",
    "password-file", "temp-dir", "backup-dir", "link-dest", "compare-dest", "copy-dest", "filter", "chmod", "chown", "suffix",
    "partial-dir", "timeout", "bwlimit", "max-size", "min-size", "out-format", "info", "debug", "port"]),
  values: {
    "exclude-from": "read", "include-from": "read", "files-from": "read", "log-file": "write", "password-file": "read",
    "link-dest": "read", "compare-dest": "read", "copy-dest": "read", T: "write", "temp-dir": "write", "backup-dir": "write",
  },
  runs: ["e", "rsh", "rsync-path"],
  // `-L`, `--copy-unsafe-links` (the links that lead out of the tree), `-k` (links to folders)
  // copy what the sources' links lead to; `-K` writes through the destination's links to folders.
  operands: (operands, parsed) => {
    const local = operands.filter((w) => !(w.kind === "literal" && /^[^/]*:/.test(w.value)));
    const follows = hasOption(parsed, "L", "copy-links", "copy-unsafe-links", "k", "copy-dirlinks");
    const tree = hasOption(parsed, "r", "recursive", "a", "archive") ? (follows ? "follow" : "content") : null;
    const dest = local.length === operands.length && operands.length > 1 ? operands.at(-1)! : null;
    const destTree = tree && (hasOption(parsed, "K", "keep-dirlinks") ? "follow" : "content");
    return [...local.filter((w) => w !== dest).map((w) => use(w, "read", tree)), ...(dest === null ? [] : [use(dest, "write", destTree)])];
  },
};

const REMOVERS: FileCommandSpec = { options: gnu("", ["interactive", "preserve-root"]), operands: writesAll((p) => hasOption(p, "r", "R", "recursive")) };
const OWNER_CHANGERS: FileCommandSpec = {
  options: gnu("", ["reference", "from"]),
  values: { reference: "read" },
  operands: (operands, parsed) => operands.slice(hasOption(parsed, "reference") ? 0 : 1).map((w) => use(w, "write", changesTree(parsed))),
};
const MODE = /^([0-7]+|([ugoa]*([-+=]([rwxXst]*|[ugo]))+)(,([ugoa]*([-+=]([rwxXst]*|[ugo]))+))*)$/;
/** chmod's mode may be `-x`, which reads like an option: a word that is a mode is not a file. */
const MODE_CHANGERS: FileCommandSpec = {
  ...OWNER_CHANGERS,
  operands: (operands, parsed) => operands.filter((w) => !MODE.test(w.value)).map((w) => use(w, "write", changesTree(parsed))),
};

const UNIQ: FileCommandSpec = {
  options: gnu("fsw", ["skip-fields", "skip-chars", "check-chars", "group", "all-repeated"]),
  operands: (operands) => [...operands.slice(0, 1).map((w) => use(w, "read")), ...operands.slice(1, 2).map((w) => use(w, "write"))],
};
const XXD: FileCommandSpec = { ...UNIQ, options: gnu("cglosn", ["cols", "groupsize", "len", "seek", "name"]) };

const COMPRESSORS: FileCommandSpec = {
  options: gnu("Sob", ["suffix", "output", "rsyncable"]),
  values: { o: "write", output: "write" },
  operands: (operands, parsed) => operands.map((w) => use(w, hasOption(parsed, "c", "stdout", "t", "test", "l", "list") ? "read" : "write")),
};

const CURL: FileCommandSpec = {
  options: gnu("oTdFKbcDEHuXxAemrwyYzCQ", ["output", "upload-file", "data", "data-binary", "data-raw", "data-urlencode", "form",
    "config", "cookie", "cookie-jar", "dump-header", "trace", "trace-ascii", "stderr", "cert", "key", "cacert", "netrc-file",
    "output-dir", "header", "user", "request", "proxy", "user-agent", "referer", "max-time", "connect-timeout", "retry",
    "write-out", "range", "time-cond", "url", "json", "libcurl", "etag-save", "etag-compare", "hsts", "alt-svc"]),
  values: {
    o: "write", output: "write", T: "read", "upload-file": "read", K: "read", config: "read", c: "write", "cookie-jar": "write",
    D: "write", "dump-header": "write", trace: "write", "trace-ascii": "write", stderr: "write", E: "read", cert: "read",
    key: "read", cacert: "read", "netrc-file": "read", libcurl: "write", "etag-save": "write", "etag-compare": "read",
    hsts: "write", "alt-svc": "write",
  },
  operands: () => [],
};

/** `@FILE` and `<FILE` inside curl's data and form values are files it reads and sends. */
function curlDataFiles(parsed: ParsedOptions): FileUse[] {
  const uses: FileUse[] = [];
  for (const o of optionValues(parsed, "d", "data", "data-binary", "data-urlencode", "F", "form", "json", "b", "cookie")) {
    const match = /(?:^|=)[@<](.+)$/.exec(o.value);
    if (match !== null) uses.push(use(literalWord(match[1]!), "read"));
  }
  if (hasOption(parsed, "O", "remote-name", "remote-name-all", "J", "remote-header-name")) {
    const dir = optionValues(parsed, "output-dir").at(-1)?.value ?? ".";
    uses.push(use(literalWord(dir), "write", "incoming"));
  }
  return uses;
}

const WGET: FileCommandSpec = {
  options: gnu("OoaPiteTwUYQlADRIXB", ["output-document", "output-file", "append-output", "directory-prefix", "input-file",
    "post-file", "body-file", "load-cookies", "save-cookies", "execute", "tries", "timeout", "wait", "user-agent", "level",
    "accept", "reject", "domains", "header", "user", "password", "base", "config", "ca-certificate", "certificate",
    "private-key", "warc-file", "method", "body-data", "post-data", "referer", "cut-dirs", "limit-rate", "quota"]),
  values: {
    O: "write", "output-document": "write", o: "write", "output-file": "write", a: "write", "append-output": "write",
    i: "read", "input-file": "read", "post-file": "read", "body-file": "read", "load-cookies": "read", "save-cookies": "write",
    config: "read", "ca-certificate": "read", certificate: "read", "private-key": "read", "warc-file": "write",
  },
  runs: ["e", "execute"],
  operands: (_operands, parsed) => {
    if (hasOption(parsed, "O", "output-document")) return [];
    return [use(literalWord(optionValues(parsed, "P", "directory-prefix").at(-1)?.value ?? "."), "write", "incoming")];
  },
};

/** `fd PATTERN [PATH…]` lists what it finds; with `-x`/`-X` a command reads each. */
const FD: FileCommandSpec = {
  options: gnu("exXEtdSocj", ["extension", "exec", "exec-batch", "exclude", "type", "max-depth", "size", "owner", "changed-within", "threads", "ignore-file"]),
  values: { "ignore-file": "read" },
  operands: (operands, parsed) => {
    const tree = hasOption(parsed, "x", "exec", "X", "exec-batch", "L", "follow") ? "follow" : "names";
    const paths = operands.slice(1);
    return (paths.length > 0 ? paths : [literalWord(".")]).map((w) => use(w, "read", tree));
  },
};

/** `scp [-r] SRC… DEST`: local sources read (whole with -r), a local destination written. */
const SCP: FileCommandSpec = {
  options: gnu("cFiJlloPSDX", ["config"]),
  values: { F: "read", i: "read" },
  operands: (operands, parsed) => {
    const local = (w: ShellWord): boolean => !(w.kind === "literal" && /^[^/]*:/.test(w.value));
    // `scp -r` copies what the links in the tree lead to.
    const tree = hasOption(parsed, "r") ? "follow" : null;
    const dest = operands.length > 1 ? operands.at(-1)! : null;
    return [
      ...operands.filter((w) => w !== dest && local(w)).map((w) => use(w, "read", tree)),
      ...(dest !== null && local(dest) ? [use(dest, "write", tree && "content")] : []),
    ];
  },
};

export const FILE_COMMANDS: Readonly<Record<string, FileCommandSpec>> = {
  cat: reader(), tac: reader("bs"), nl: reader("bdfhilnsvw"), head: reader("nc", ["lines", "bytes"]),
  tail: reader("ncs", ["lines", "bytes", "pid", "sleep-interval", "max-unchanged-stats"]), less: reader("bhjkoOpPtTxyz#"),
  more: reader("n"), wc: { options: gnu("", ["files0-from"]), values: { "files0-from": "read" }, operands: readsAll() },
  md5sum: reader(), sha1sum: reader(), sha224sum: reader(), sha256sum: reader(), sha384sum: reader(), sha512sum: reader(),
  b2sum: reader("l"), cksum: reader("a"), sum: reader(), base64: reader("w"), base32: reader("w"), basenc: reader("w"),
  od: reader("AjNStw"), hexdump: { options: gnu("efns"), values: { f: "read" }, operands: readsAll() }, hd: reader("efns"),
  strings: reader("ntTe"), file: { options: gnu("mfF", ["magic-file", "files-from", "separator"]), values: { m: "read", f: "read", "files-from": "read" }, operands: readsAll() },
  stat: reader("ct", ["format", "printf"]), readlink: reader(), realpath: reader("", ["relative-to", "relative-base"]),
  cut: reader("bcdf", ["bytes", "characters", "delimiter", "fields", "output-delimiter"]), paste: reader("d"),
  join: reader("12ejot"), comm: reader("", ["output-delimiter"]), cmp: reader("inbl"), fold: reader("w"), fmt: reader("wpg"),
  pr: reader("hwlosNeinS"), expand: reader("t"), unexpand: reader("t"), column: reader("stcoNRHWdrEJn"), tsort: reader(),
  shuf: { options: gnu("nioe", ["head-count", "input-range", "output", "random-source"]), values: { o: "write", output: "write", "random-source": "read" }, operands: (ops, p) => (hasOption(p, "e", "echo", "i", "input-range") ? [] : readsAll()(ops, p)) },
  rev: reader(), iconv: { options: gnu("fto", ["from-code", "to-code", "output"]), values: { o: "write", output: "write" }, operands: readsAll() },
  look: reader("t"), jq: {
    options: gnu("fL", ["from-file", "arg", "argjson", "slurpfile", "rawfile", "indent", "args", "jsonargs"]),
    values: { f: "read", "from-file": "read" },
    operands: afterPattern(["f", "from-file"], readsAll()),
  },
  yq: reader("IoeP", ["indent", "output-format", "input-format", "expression"]), bat: reader("lHmrp", ["language", "highlight-line", "style", "theme", "line-range", "map-syntax"]),
  xmllint: { options: gnu("", ["output", "xpath", "schema", "relaxng", "dtdvalid", "path"]), values: { output: "write", schema: "read", relaxng: "read", dtdvalid: "read" }, operands: readsAll() },
  diff: {
    options: gnu("CUIxXSFWDL", ["context", "unified", "ignore-matching-lines", "exclude", "exclude-from", "starting-file", "show-function-line",
      "width", "ifdef", "label", "from-file", "to-file", "line-format", "color", "palette", "horizon-lines", "tabsize"]),
    values: { X: "read", "exclude-from": "read", "from-file": "read", "to-file": "read" },
    // `diff -r` compares what links lead to unless told `--no-dereference`.
    operands: readsAll((p) => (hasOption(p, "r", "recursive") ? (hasOption(p, "no-dereference") ? "content" : "follow") : null)),
  },
  diff3: reader("L", ["label"]), sdiff: { options: gnu("owI", ["output", "width"]), values: { o: "write", output: "write" }, operands: readsAll() },
  ls: { options: gnu("IwTp", ["ignore", "width", "tabsize", "hide", "format", "sort", "time", "time-style", "color", "quoting-style", "indicator-style", "block-size"]), operands: readsAll(lsTree, ".") },
  tree: { options: gnu("LPIoH", ["filelimit", "timefmt", "charset", "sort"]), values: { o: "write" }, operands: readsAll((p) => (hasOption(p, "l") ? "follow" : "names"), ".") },
  du: { options: gnu("BdtX", ["block-size", "max-depth", "threshold", "exclude", "exclude-from", "files0-from", "time", "time-style"]), values: { X: "read", "exclude-from": "read", "files0-from": "read" }, operands: readsAll((p) => (hasOption(p, "L", "dereference") ? "follow" : "names"), ".") },
  grep: GREP, egrep: GREP, fgrep: GREP, rgrep: { ...GREP, operands: afterPattern(["e", "regexp", "f", "file"], readsAll(() => "content", ".")) },
  rg: RG, ag: SEARCHERS, ack: SEARCHERS, sed: SED, awk: AWK, gawk: AWK, mawk: AWK, nawk: AWK,
  sort: SORT, uniq: UNIQ, xxd: XXD, tee: TEE, cp: CP, mv: MV, ln: LN, install: INSTALL, rsync: RSYNC,
  rm: REMOVERS, rmdir: { options: flagsOnly, operands: writesAll() }, unlink: { options: flagsOnly, operands: writesAll() },
  shred: { options: gnu("ns", ["iterations", "size", "random-source"]), values: { "random-source": "read" }, operands: writesAll() },
  touch: { options: gnu("rdt", ["reference", "date", "time"]), values: { r: "read", reference: "read" }, operands: writesAll() },
  truncate: { options: gnu("sr", ["size", "reference"]), values: { r: "read", reference: "read" }, operands: writesAll() },
  mkdir: { options: gnu("m", ["mode", "context"]), operands: writesAll() }, mkfifo: { options: gnu("m", ["mode"]), operands: writesAll() },
  mknod: { options: gnu("m", ["mode"]), operands: (ops) => ops.slice(0, 1).map((w) => use(w, "write")) },
  chmod: MODE_CHANGERS, chown: OWNER_CHANGERS, chgrp: OWNER_CHANGERS, chattr: OWNER_CHANGERS,
  setfacl: {
    options: gnu("mMxX", ["modify", "modify-file", "remove", "remove-file", "set", "set-file"]),
    values: { M: "read", "modify-file": "read", X: "read", "remove-file": "read", "set-file": "read" },
    operands: (operands, parsed) => operands.map((w) => use(w, "write", changesTree(parsed))),
  },
  patch: {
    options: gnu("iordpBFDzVYg", ["input", "output", "reject-file", "directory", "strip", "prefix", "fuzz", "ifdef", "suffix", "version-control", "basename-prefix"]),
    values: { i: "read", input: "read", o: "write", output: "write", r: "write", "reject-file": "write" },
    directory: ["d", "directory"],
    // With no file named, patch writes the files the patch names.
    operands: (ops) => (ops.length === 0 ? [use(literalWord("."), "write", "incoming")] : [...ops.slice(0, 1).map((w) => use(w, "write")), ...ops.slice(1, 2).map((w) => use(w, "read"))]),
  },
  split: { options: gnu("abClnt", ["suffix-length", "bytes", "line-bytes", "lines", "number", "separator", "additional-suffix", "filter"]), runs: ["filter"], operands: (ops) => [...ops.slice(0, 1).map((w) => use(w, "read")), ...ops.slice(1, 2).map((w) => use(w, "write"))] },
  csplit: { options: gnu("bfn", ["suffix-format", "prefix", "digits"]), values: { f: "write", prefix: "write" }, operands: (ops) => ops.slice(0, 1).map((w) => use(w, "read")) },
  gzip: COMPRESSORS, gunzip: COMPRESSORS, bzip2: COMPRESSORS, bunzip2: COMPRESSORS, xz: COMPRESSORS, unxz: COMPRESSORS,
  zstd: COMPRESSORS, unzstd: COMPRESSORS, lz4: COMPRESSORS, compress: COMPRESSORS, uncompress: COMPRESSORS, zcat: reader(),
  zip: { options: gnu("bntxiP", ["temp-path", "exclude", "include", "password"]), operands: (ops, p) => [...ops.slice(0, 1).map((w) => use(w, "write")), ...ops.slice(1).map((w) => use(w, "read", zipTree(p)))] },
  unzip: { options: gnu("dxP"), operands: (ops, p) => [...ops.slice(0, 1).map((w) => use(w, "read")), ...(hasOption(p, "l", "t", "p", "Z") ? [] : [use(literalWord(optionValues(p, "d").at(-1)?.value ?? "."), "write", "incoming")])] },
  curl: CURL, wget: WGET, source: reader(), ".": reader(), cd: reader(), pushd: reader(),
  fd: FD, fdfind: FD, scp: SCP,
};

/** `zip -r` stores what the links in the tree lead to, unless `-y` keeps them as links. */
function zipTree(parsed: ParsedOptions): TreeKind {
  if (!hasOption(parsed, "r", "recurse-paths", "R", "recurse-patterns")) return null;
  return hasOption(parsed, "y", "symlinks") ? "content" : "follow";
}

/** `dd if=F of=G`: the operands are `key=value`. */
function ddFiles(argv: readonly ShellWord[]): CommandFiles {
  const uses: FileUse[] = [];
  for (const word of argv.slice(1)) {
    const match = /^(if|of)=(.*)$/.exec(word.value);
    if (match !== null) uses.push(use({ ...word, value: match[2]!, raw: match[2]! }, match[1] === "if" ? "read" : "write"));
  }
  return { uses, unjudgeable: null, mustName: [], directories: [] };
}

const TAR_RUNS = ["to-command", "use-compress-program", "I", "checkpoint-action", "info-script", "new-volume-script", "F", "rsh-command", "rmt-command"];

/** `tar c|x|t|r|u [-f ARCHIVE] [-C DIR] FILES…`, old-style bundles (`tar czf a.tgz src`) included. */
function tarFiles(argv: readonly ShellWord[]): CommandFiles {
  const words = [...argv];
  if (words[1]?.kind === "literal" && !words[1].value.startsWith("-")) words[1] = { ...words[1], value: `-${words[1].value}` };
  const parsed = parseOptions(words, gnu("fCbTXIFgHKLNVM", ["file", "directory", "blocking-factor", "files-from", "exclude-from",
    "exclude", "use-compress-program", "info-script", "new-volume-script", "listed-incremental", "to-command", "checkpoint-action",
    "format", "owner", "group", "mode", "mtime", "transform", "xform", "strip-components", "rsh-command", "rmt-command", "label",
    "starting-file", "newer", "after-date", "suffix", "backup", "checkpoint"]), 1, false);
  const found = optionValues(parsed, ...TAR_RUNS)[0];
  const runs = found === undefined || (found.name === "checkpoint-action" && !/^(exec|sh)/.test(found.value)) ? undefined : found;
  const unjudgeable = runs === undefined ? null : `\`tar\` runs the program given to \`${runs.name}\``;
  const archive = optionValues(parsed, "f", "file").at(-1);
  const creates = hasOption(parsed, "c", "create", "r", "append", "u", "update", "A", "catenate", "concatenate");
  const extracts = hasOption(parsed, "x", "extract", "get");
  const uses: FileUse[] = [];
  if (archive !== undefined && archive.value !== "-") uses.push(use(archive.valueWord ?? literalWord(archive.value), creates ? "write" : "read"));
  for (const o of optionValues(parsed, "T", "files-from", "X", "exclude-from")) uses.push(use(o.valueWord ?? literalWord(o.value), "read"));
  const follow = hasOption(parsed, "h", "dereference");
  if (creates) uses.push(...parsed.operands.map((w) => use(w, "read", follow ? "follow" : "content")));
  if (extracts) uses.push(use(literalWord("."), "write", "incoming"));
  const directories = optionValues(parsed, "C", "directory").map((o) => o.valueWord ?? literalWord(o.value));
  return { uses, unjudgeable, mustName: runs === undefined ? [] : [`${runs.name.length > 1 ? "--" : "-"}${runs.name}`], directories };
}

const FIND_EXPRESSION = /^[-!(),]/;

/** `find [-H|-L|-P] START… EXPR`: starts listed, read whole by `-exec` bodies, written by `-delete` and `-fprint*`. */
function findFiles(argv: readonly ShellWord[]): CommandFiles {
  let i = 1;
  let follow = false;
  while (argv[i]?.kind === "literal" && /^-[HLPDO]/.test(argv[i]!.value)) {
    if (argv[i]!.value === "-L") follow = true;
    i += /^-[DO]$/.test(argv[i]!.value) ? 2 : 1;
  }
  const starts: ShellWord[] = [];
  for (; i < argv.length && !(argv[i]!.kind === "literal" && FIND_EXPRESSION.test(argv[i]!.value)); i++) starts.push(argv[i]!);
  const expression = argv.slice(i).map((w) => w.value);
  if (starts.length === 0) starts.push(literalWord("."));
  follow ||= expression.includes("-follow");
  const execs = expression.some((w) => /^-(exec|execdir|ok|okdir)$/.test(w));
  const deletes = expression.includes("-delete");
  const uses: FileUse[] = starts.map((w) => use(w, deletes ? "write" : "read", execs || follow ? "follow" : deletes ? "content" : "names"));
  expression.forEach((w, k) => {
    if (/^-(fprint|fprint0|fprintf|fls)$/.test(w) && argv[i + k + 1] !== undefined) uses.push(use(argv[i + k + 1]!, "write"));
    if (w === "-files0-from" && argv[i + k + 1] !== undefined) uses.push(use(argv[i + k + 1]!, "read"));
  });
  return { uses, unjudgeable: null, mustName: [], directories: [] };
}

/** git's own file arguments: `--output`, `format-patch -o`, `archive -o`, `diff --no-index`, `grep`, `config -f`. */
function gitFiles(argv: readonly ShellWord[]): CommandFiles {
  const sub = argv[1]?.value ?? "";
  const valued = sub === "format-patch" || sub === "archive" ? "oF" : sub === "config" ? "f" : "F";
  const long = sub === "format-patch" ? ["output", "output-directory"] : sub === "archive" ? ["output", "remote", "prefix", "format"]
    : sub === "config" ? ["file", "blob"] : ["output", "file"];
  const parsed = parseOptions(argv, gnu(valued, long), 2, false);
  const uses: FileUse[] = [];
  const write = (word: ShellWord, tree: FileUse["tree"] = null): void => { uses.push(use(word, "write", tree)); };
  const valueWord = (o: { value: string; valueWord?: ShellWord }): ShellWord => o.valueWord ?? literalWord(o.value);
  for (const o of optionValues(parsed, "output")) write(valueWord(o));
  if (sub === "format-patch") for (const o of optionValues(parsed, "o", "output-directory")) write(valueWord(o));
  if (sub === "archive") for (const o of optionValues(parsed, "o")) write(valueWord(o));
  if (["commit", "tag", "notes", "merge"].includes(sub)) for (const o of optionValues(parsed, "F", "file")) uses.push(use(valueWord(o), "read"));
  if (sub === "config") for (const o of optionValues(parsed, "f", "file")) write(valueWord(o));
  if (sub === "bundle" && argv[2]?.value === "create" && argv[3] !== undefined) write(argv[3]);
  if ((sub === "diff" && hasOption(parsed, "no-index")) || (sub === "grep" && hasOption(parsed, "no-index", "untracked"))) {
    const operands = sub === "grep" ? parsed.operands.slice(1) : parsed.operands;
    uses.push(...(operands.length > 0 ? operands : [literalWord(".")]).map((w) => use(w, "read", "follow")));
  } else if (sub === "grep") {
    uses.push(use(literalWord("."), "read", "content"));
  }
  if (sub === "apply" || sub === "am") write(literalWord("."), "incoming");
  // `git show HEAD:.env`, `git cat-file -p :src/x`: a revision's file is read.
  for (const word of parsed.operands) {
    const match = word.kind === "literal" && !word.value.includes("://") ? /^[^:\s]*:(?!\/\/)(.+)$/.exec(word.value) : null;
    if (match !== null) uses.push(use(literalWord(match[1]!), "read"));
  }
  if (sub === "worktree" && parsed.operands[0]?.value === "add" && parsed.operands[1] !== undefined) write(parsed.operands[1], "incoming");
  if (sub === "clone" && parsed.operands[1] !== undefined) write(parsed.operands[1], "incoming");
  if (sub === "init" && parsed.operands[0] !== undefined) write(parsed.operands[0], "incoming");
  return { uses, unjudgeable: null, mustName: [], directories: [] };
}

const SPECIAL: Readonly<Record<string, (argv: readonly ShellWord[]) => CommandFiles>> = { dd: ddFiles, tar: tarFiles, find: findFiles, git: gitFiles };

/** The basename a table lookup uses: `/usr/bin/grep` is `grep`. */
function tableName(word: ShellWord | undefined): string | null {
  if (word === undefined || word.kind !== "literal") return null;
  return word.value === "." ? "." : (word.value.split("/").pop() ?? null);
}

/** True when the command's file arguments are known (it is in the table). */
export function isFileCommand(word: ShellWord | undefined): boolean {
  const name = tableName(word);
  return name !== null && (name in FILE_COMMANDS || name in SPECIAL);
}

/** The files `argv` reads and writes by its operands and options; nothing for a command not in the table. */
export function commandFiles(argv: readonly ShellWord[]): CommandFiles {
  const name = tableName(argv[0]);
  const special = name === null ? undefined : SPECIAL[name];
  if (special !== undefined) return special(argv);
  const spec = name === null ? undefined : FILE_COMMANDS[name];
  if (spec === undefined) return { uses: [], unjudgeable: null, mustName: [], directories: [] };
  const files = filesBySpec(argv, spec);
  if (name === "curl") files.uses.push(...curlDataFiles(parseOptions(argv, spec.options, 1, false)));
  // `jq --rawfile NAME FILE`, `--slurpfile NAME FILE`: the word after the name is a file.
  if (name === "jq") argv.forEach((w, i) => { if (/^--(rawfile|slurpfile)$/.test(w.value) && argv[i + 2] !== undefined) files.uses.push(use(argv[i + 2]!, "read")); });
  return files;
}

/**
 * True when the command's file arguments are known exactly, so its other words are not paths
 * (`grep ../ src` searches for `../`); git's revisions and pathspecs stay path-like words.
 */
export function filesArePrecise(word: ShellWord | undefined): boolean {
  return isFileCommand(word) && tableName(word) !== "git";
}
