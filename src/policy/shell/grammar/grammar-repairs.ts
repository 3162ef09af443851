/**
 * Where the bash grammar and bash part ways on text that is still valid: rewrites that keep
 * what bash runs but get the grammar past it, and where a parse failed, said for a person.
 */
import type { Node } from "web-tree-sitter";

/**
 * Rewrites that keep what bash runs and get past places the grammar stumbles: `\$(` is a
 * literal `$(` outside backquotes; a here-document body whose first line starts with a
 * backslash is misread unless the line starts with a blank (which changes only the text).
 */
export function repairs(source: string, root: Node): string[] {
  const bodyStarts = new Set<number>();
  const visit = (n: Node): void => {
    if (n.type === "heredoc_start") bodyStarts.add(n.startPosition.row + 1);
    for (const child of n.children) if (child !== null) visit(child);
  };
  visit(root);
  const indentBodies = (text: string): string =>
    text.split("\n").map((line, row) => (bodyStarts.has(row) && line.startsWith("\\") ? ` ${line}` : line)).join("\n");
  const unescape = (text: string): string => (text.includes("`") ? text : text.replaceAll("\\$(", "\\$\\("));
  return [...new Set([unescape(source), indentBodies(source), indentBodies(unescape(source))])].filter((text) => text !== source);
}

export function findSyntaxError(node: Node): string {
  if (node.isError || node.isMissing) {
    const { row, column } = node.startPosition;
    const what = node.isMissing ? `a missing \`${node.type}\`` : `\`${node.text.slice(0, 40)}\``;
    return `${what} at line ${row + 1}, column ${column + 1}`;
  }
  for (const child of node.children) if (child !== null && child.hasError) return findSyntaxError(child);
  return "the command";
}

