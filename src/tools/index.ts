/** Placeholder until the tools land (issue 3): the built-in tool set. */
import type { Tool } from "../core/tool.js";

export function builtinTools(): Tool[] {
  return [];
}
