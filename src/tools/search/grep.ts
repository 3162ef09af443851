/**
 * The `grep` tool: regex search of workspace files, `path:line:text`, `.gitignore` honoured,
 * capped and sorted by path and line. Runs ripgrep when there is one (see ripgrep.ts), else
 * the JavaScript backend; both give the same lines for the same tree.
 */
import { open, stat } from "node:fs/promises";
import picomatch from "picomatch";
import { ToolError } from "../../core/errors.js";
import type { Tool, ToolContext, ToolPlan, ToolResult } from "../../core/tool.js";
import { SNIFF_BYTES, looksBinary } from "../files/file-kind.js";
import { type SearchToolOptions, checkRelativePattern, describeFolder } from "./glob.js";
import { compilePattern, searchFilesJs } from "./grep-js.js";
import { type GrepLine, MatchCollector, formatTally } from "./grep-matches.js";
import { inheritedMatchers, ripgrepIgnoreText } from "./gitignore-rules.js";
import { RG_SCOPE_ARGS, ripgrepLocator, ripgrepNameFilterArgs, runRipgrep, stripDotSlash } from "./ripgrep.js";
import { listFiles, ripgrepRoot } from "./workspace-files.js";
import { type ScopedPath, resolveInWorkspace } from "../workspace-scope.js";

/** Matches shown before the rest are counted. */
export const GREP_MAX_MATCHES = 200;
/** Budget for the printed lines. */
export const GREP_MAX_BYTES = 40_000;
export const GREP_MAX_CONTEXT = 10;

/** The input, as the schema below lets it through (the engine checked it). */
interface GrepToolInput { pattern: string; path?: string; glob?: string; ignoreCase?: boolean; context?: number }

interface GrepInput { pattern: string; target: ScopedPath; glob?: string; ignoreCase: boolean; context: number }

async function parse(input: unknown, ctx: ToolContext): Promise<GrepInput> {
  const { pattern, path = ".", glob, ignoreCase = false, context = 0 } = input as GrepToolInput;
  if (pattern === "") throw new ToolError("`pattern` is empty");
  if (glob !== undefined) checkRelativePattern(glob, "glob");
  const target = await resolveInWorkspace(ctx.workspace, path);
  return { pattern, target, ...(glob !== undefined ? { glob } : {}), ignoreCase, context };
}

export function grepTool(options: SearchToolOptions = {}): Tool {
  const locate = options.locateRipgrep ?? ripgrepLocator(options.ripgrep);
  return {
    spec: {
      name: "grep",
      description:
        "Search file contents with a regular expression (ripgrep syntax). Prints path:line:text for each matching line, " +
        "sorted; files ignored by .gitignore and binary files are skipped. Narrow with path and glob.",
      inputSchema: {
        type: "object",
        properties: {
          pattern: { type: "string", description: "Regular expression, matched line by line." },
          path: { type: "string", description: "File or folder to search, relative to the workspace root. Default: the root." },
          glob: { type: "string", description: "Only files matching this glob, e.g. \"*.ts\" (a name) or \"src/**/*.ts\" (a path under `path`)." },
          ignoreCase: { type: "boolean", description: "Case-insensitive search. Default false." },
          context: { type: "integer", minimum: 0, maximum: GREP_MAX_CONTEXT, description: "Lines of context around each match. Default 0." },
        },
        required: ["pattern"],
        additionalProperties: false,
      },
    },
    effect: "read",
    async plan(input, ctx): Promise<ToolPlan> {
      return { paths: [(await parse(input, ctx)).target.rel] };
    },
    async run(input, ctx): Promise<ToolResult> {
      const grep = await parse(input, ctx);
      const info = await stat(grep.target.abs).catch(() => null);
      if (!info) throw new ToolError(`No such file or folder: ${grep.target.rel}`);
      if (!info.isFile() && !info.isDirectory()) throw new ToolError(`${grep.target.rel} is not a regular file or folder; not searched`);
      if (info.isFile() && (await isBinaryFile(grep.target.abs))) {
        return { content: `${grep.target.rel} is a binary file; not searched.` };
      }
      const collector = new MatchCollector(GREP_MAX_MATCHES, grep.context);
      const search = { workspace: ctx.workspace, grep, isFile: info.isFile(), signal: ctx.signal, collector };
      const rg = await locate();
      if (rg === null) await searchWithJs(search);
      else await searchWithRipgrep(rg, search);
      const tally = collector.finish();
      if (tally.totalMatches === 0) return { content: `No matches for ${grep.pattern} in ${describeFolder(grep.target)}.` };
      return { content: formatTally(tally, { context: grep.context, maxBytes: GREP_MAX_BYTES }) };
    },
  };
}

interface Search { workspace: string; grep: GrepInput; isFile: boolean; signal: AbortSignal; collector: MatchCollector }

async function searchWithJs(s: Search): Promise<void> {
  const regex = compilePattern(s.grep.pattern, s.grep.ignoreCase);
  const root = rootOf(s.grep.target);
  const files = s.isFile ? [root] : (await listFiles({ workspace: s.workspace, root, rg: null, signal: s.signal }));
  const keep = s.isFile ? () => true : fileFilter(s.grep.glob, root);
  await searchFilesJs({
    workspace: s.workspace, files: files.filter(keep), regex, context: s.grep.context, signal: s.signal,
    onLine: (path, line) => s.collector.push(path, line),
  });
}

async function searchWithRipgrep(rg: string, s: Search): Promise<void> {
  const root = rootOf(s.grep.target);
  const ignoreText = s.isFile ? "" : ripgrepIgnoreText(await inheritedMatchers(s.workspace, root));
  const keep = s.isFile ? () => true : fileFilter(s.grep.glob, root);
  const glob = s.grep.glob;
  const typeArgs = s.isFile || glob?.includes("/") ? [] : ripgrepNameFilterArgs(glob);
  const { exitCode, stderr } = await runRipgrep(rg, {
    args: [
      ...RG_SCOPE_ARGS, ...typeArgs,
      "--line-number", "--with-filename", "--no-heading", "--null",
      s.grep.ignoreCase ? "--ignore-case" : "--case-sensitive",
      ...(s.grep.context > 0 ? ["--context", String(s.grep.context)] : []),
      "-e", s.grep.pattern, "--", ripgrepRoot(root),
    ],
    cwd: s.workspace,
    ignoreRules: ignoreText,
    separator: 0x0a,
    onRecord: (record) => {
      const parsed = parseRipgrepLine(record);
      if (parsed && keep(parsed.path)) s.collector.push(parsed.path, parsed.line);
    },
    signal: s.signal,
  });
  if (exitCode === 2 && stderr.trim() !== "") throw new ToolError(`grep failed: ${stderr.trim()}`);
}

/** `path\0NN:text` (a match) or `path\0NN-text` (context); null for "--" and anything else. */
export function parseRipgrepLine(record: string): { path: string; line: GrepLine } | null {
  const nul = record.indexOf("\0");
  if (nul === -1) return null;
  const m = /^(\d+)([:-])/.exec(record.slice(nul + 1, nul + 22));
  if (!m) return null;
  const path = stripDotSlash(record.slice(0, nul));
  const text = record.slice(nul + 1 + m[0].length);
  return { path, line: { line: Number(m[1]), match: m[2] === ":", text } };
}

/**
 * Which files a `glob` lets through: one without "/" is matched against the file name, one
 * with "/" against the path below the search folder.
 */
export function fileFilter(glob: string | undefined, root: string): (path: string) => boolean {
  if (glob === undefined) return () => true;
  const isMatch = picomatch(glob, { dot: true });
  if (!glob.includes("/")) return (path) => isMatch(path.slice(path.lastIndexOf("/") + 1));
  const cut = root === "" ? 0 : root.length + 1;
  return (path) => isMatch(path.slice(cut));
}

function rootOf(target: ScopedPath): string {
  return target.rel === "." ? "" : target.rel;
}

async function isBinaryFile(abs: string): Promise<boolean> {
  const handle = await open(abs, "r");
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0);
    return looksBinary(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}
