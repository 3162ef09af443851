/**
 * The built-in tools, all scoped to the workspace (workspace-scope.ts): read_file, write_file,
 * edit_file, list_dir, glob, grep, shell. Their specs are fixed text (they sit in every
 * request's cached prefix), and `builtinTools` always lists them in this order.
 */
import type { Tool } from "../core/tool.js";
import { editFileTool } from "./edit-file.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { listDirTool } from "./list-dir.js";
import { readFileTool } from "./read-file.js";
import { type RipgrepChoice, ripgrepLocator } from "./ripgrep.js";
import { type ShellToolOptions, shellTool } from "./shell.js";
import { writeFileTool } from "./write-file.js";

export interface BuiltinToolsOptions extends ShellToolOptions {
  /** Search backend for glob and grep; default "auto". */
  ripgrep?: RipgrepChoice;
}

/** The seven built-in tools, in a fixed order; glob and grep share one ripgrep lookup. */
export function builtinTools(options: BuiltinToolsOptions = {}): Tool[] {
  const locateRipgrep = ripgrepLocator(options.ripgrep);
  return [
    readFileTool(),
    writeFileTool(),
    editFileTool(),
    listDirTool(),
    globTool({ locateRipgrep }),
    grepTool({ locateRipgrep }),
    shellTool(options.baseEnv ? { baseEnv: options.baseEnv } : {}),
  ];
}

export { editFileTool } from "./edit-file.js";
export { globTool, type SearchToolOptions } from "./glob.js";
export { grepTool } from "./grep.js";
export { listDirTool } from "./list-dir.js";
export { readFileTool } from "./read-file.js";
export { type RipgrepChoice } from "./ripgrep.js";
export { shellTool, type ShellToolOptions } from "./shell.js";
export { writeFileTool } from "./write-file.js";
export { resolveInWorkspace, type ScopedPath } from "./workspace-scope.js";
