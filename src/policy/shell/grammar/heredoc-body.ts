/**
 * An unquoted here-document's body is expanded like a double-quoted string — `$(…)`, backquotes,
 * `${…}` and `$((…))` all run — but the grammar does not read every form inside a body (a
 * backquoted command there leaves no node at all). So the body is rewritten as the double-quoted
 * string bash treats it as, and parsed again on its own.
 */

/**
 * The body as the inside of a double-quoted string with the same expansions: a `"` is literal in
 * a body, and a backslash escapes only `$`, a backquote, a backslash and a newline there.
 */
export function bodyAsDoubleQuoted(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch === "\\") {
      const next = body[i + 1];
      if (next !== undefined && "$`\\\n".includes(next)) {
        out += ch + next;
        i++;
      } else {
        out += "\\\\";
      }
    } else if (ch === '"') {
      out += '\\"';
    } else {
      out += ch;
    }
  }
  return out;
}
