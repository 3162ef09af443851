/**
 * Path globs in policy rules: workspace-relative, `/`-separated, matched with picomatch
 * (`dot: true`, so `**` covers `.github` and `**\/.env` covers `.env`). The workspace root
 * itself (".") is matched only by `**`.
 */
import picomatch from "picomatch";

/** Why `glob` cannot be used in a policy, or null when it can. */
export function globProblem(glob: string): string | null {
  if (glob.trim() === "") return "a path glob cannot be empty";
  if (glob.startsWith("/") || glob.startsWith("~") || /^[A-Za-z]:/.test(glob)) {
    return `\`${glob}\` is absolute: path globs are relative to the workspace (e.g. "src/**")`;
  }
  if (glob.startsWith("./")) return `\`${glob}\` starts with ./: write it relative to the workspace without it (e.g. "${glob.slice(2)}")`;
  if (glob.startsWith("!")) return `\`${glob}\` is negated: negation is not supported, write a deny rule instead`;
  if (glob.includes("\\")) return `\`${glob}\` contains a backslash: separate path segments with /`;
  if (glob.split("/").includes("..")) return `\`${glob}\` contains "..": a glob cannot reach outside the workspace`;
  const unbalanced = unbalancedBracket(glob);
  if (unbalanced !== null) return `\`${glob}\` has an unclosed \`${unbalanced}\``;
  return null;
}

function unbalancedBracket(glob: string): string | null {
  const pairs: Record<string, string> = { "[": "]", "{": "}", "(": ")" };
  const stack: string[] = [];
  for (const ch of glob) {
    if (ch in pairs) stack.push(ch);
    else if (ch === "]" || ch === "}" || ch === ")") {
      const open = stack.pop();
      if (open === undefined || pairs[open] !== ch) return open ?? ch;
    }
  }
  return stack.pop() ?? null;
}

/** A matcher for workspace-relative paths against any of `globs`. */
export function compileGlobs(globs: readonly string[]): (path: string) => boolean {
  const match = picomatch([...globs], { dot: true });
  const matchesRoot = globs.includes("**");
  return (path) => (path === "." ? matchesRoot : match(path));
}

/** The first of `globs` that `path` matches, for reasons; undefined when none does. */
export function firstMatchingGlob(globs: readonly string[], path: string): string | undefined {
  return globs.find((glob) => compileGlobs([glob])(path));
}
