/**
 * Line continuations the way bash reads them. bash removes every backslash-newline before it
 * splits words — inside double quotes and unquoted heredoc bodies too — except in single
 * quotes, `$'…'`, comments and quoted heredoc bodies. The grammar instead treats one as a word
 * break, so `r\⏎m` would parse as `r m` and `"$\⏎(cmd)"` would hide a substitution. Joining the
 * lines first makes the grammar see what bash runs.
 */
import type { Node, Tree } from "web-tree-sitter";
import type { BashParser } from "./bash-parser.js";

const CONTINUATION = "\\\n";
const MAX_ROUNDS = 4;

/** Ranges [start, end) where a backslash-newline is kept as written. */
function keptRanges(tree: Tree): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  const visit = (node: Node): void => {
    switch (node.type) {
      case "raw_string":
      case "ansi_c_string":
      case "comment":
        ranges.push([node.startIndex, node.endIndex]);
        return;
      case "heredoc_redirect": {
        const start = node.namedChildren.find((c) => c?.type === "heredoc_start");
        const body = node.namedChildren.find((c) => c?.type === "heredoc_body");
        if (start && body && /['"\\]/.test(start.text)) ranges.push([body.startIndex, body.endIndex]);
        break;
      }
      default:
        break;
    }
    for (const child of node.namedChildren) if (child !== null) visit(child);
  };
  visit(tree.rootNode);
  return ranges.sort((a, b) => a[0] - b[0]);
}

function joinOnce(source: string, kept: Array<[number, number]>): string {
  let out = "";
  let next = 0;
  for (let i = 0; i < source.length;) {
    while (next < kept.length && kept[next]![1] <= i) next++;
    const range = kept[next];
    if (range !== undefined && range[0] <= i) {
      out += source.slice(i, range[1]);
      i = range[1];
      continue;
    }
    if (source[i] === "\\") {
      if (source[i + 1] === "\n") i += 2;
      else {
        out += source.slice(i, i + 2);
        i += 2;
      }
      continue;
    }
    out += source[i];
    i++;
  }
  return out;
}

/**
 * The source with bash's line continuations removed, or null when it keeps changing (which
 * the caller treats as unanalysable). Parses only when the source has a backslash-newline.
 */
export function joinContinuedLines(source: string, parser: BashParser): string | null {
  let current = source;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (!current.includes(CONTINUATION)) return current;
    const tree = parser.parse(current);
    let joined: string;
    try {
      joined = joinOnce(current, keptRanges(tree));
    } finally {
      tree.delete();
    }
    if (joined === current) return current;
    current = joined;
  }
  return null;
}
