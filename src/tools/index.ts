/**
 * The built-in tools, all scoped to the workspace (workspace-scope.ts): read_file, write_file,
 * edit_file, list_dir, glob, grep, shell. Their specs are fixed text (they sit in every
 * request's cached prefix), and `builtinTools` always lists them in this order.
 */
import type { Tool } from "../core/tool.js";
import { editFileTool } from "./files/edit-file.js";
import { globTool } from "./search/glob.js";
import { grepTool } from "./search/grep.js";
import { listDirTool } from "./files/list-dir.js";
import { readFileTool } from "./files/read-file.js";
import { type RipgrepChoice, ripgrepLocator } from "./search/ripgrep.js";
import { type ShellToolOptions, shellTool } from "./shell.js";
import { writeFileTool } from "./files/write-file.js";

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
    shellTool({ ...(options.env ? { env: options.env } : {}), ...(options.sandbox ? { sandbox: options.sandbox } : {}) }),
  ];
}

export { editFileTool } from "./files/edit-file.js";
export { globTool, type SearchToolOptions } from "./search/glob.js";
export { grepTool } from "./search/grep.js";
export { listDirTool } from "./files/list-dir.js";
export { readFileTool } from "./files/read-file.js";
export { type RipgrepChoice } from "./search/ripgrep.js";
export { shellTool, type ShellEnv, type ShellToolOptions } from "./shell.js";
export type { SandboxPlacement } from "../process/sandbox.js";
export { writeFileTool } from "./files/write-file.js";
export { resolveInWorkspace, type ScopedPath } from "./workspace-scope.js";
