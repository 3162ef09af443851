/**
 * A trial's MCP servers (`mcp:`, issue 27), around its turn: started before the agent is made —
 * stdio servers in the trial's sandbox with the policy's network, their `${NAME}` references
 * filled from the trial's command environment (the `--allow-env` variables the planner checked) —
 * and stopped when the turn ends, however it ends. On a resume the servers are started again and
 * their specs listed again: specs that differ from those the checkpoint stamped are `mcp_changed`
 * naming the servers, unless `--restart-changed`, which continues the conversation with the new
 * specs stamped in their place (the request prefix changes from there: the user asked for it).
 */
import type { Session } from "../../core/session.js";
import { resolveServerConfig } from "../../mcp/mcp-config.js";
import { McpError } from "../../mcp/mcp-errors.js";
import { changedServers } from "../../mcp/mcp-specs.js";
import { startMcpToolset, type McpToolset } from "../../mcp/mcp-toolset.js";
import type { SandboxPlacement } from "../../process/sandbox.js";
import type { CommandEnvironment } from "../plan/task-plan.js";
import type { TaskDefinition } from "../tasks/task-file.js";

export interface TrialMcpOptions {
  task: Pick<TaskDefinition, "mcp">;
  workspace: string;
  commands: CommandEnvironment;
  sandbox?: SandboxPlacement;
  signal: AbortSignal;
  /** The checkpoint's session, whose stamped specs the servers' must equal; null: a new conversation. */
  saved: Session | null;
  /** `--restart-changed`: changed specs replace the stamped ones instead of failing the trial. */
  restartChanged: boolean;
}

/** Runs `body` with the task's servers started (null when it names none), and stops them after. */
export async function withTrialMcp<T>(opts: TrialMcpOptions, body: (toolset: McpToolset | null) => Promise<T>): Promise<T> {
  const named = Object.entries(opts.task.mcp ?? {});
  if (named.length === 0) return body(null);
  const configs = named.map(([name, server]) => resolveServerConfig(name, server.spec, opts.commands.env));
  const toolset = await startMcpToolset(configs, {
    workspace: opts.workspace, env: opts.commands.env, ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
  }, opts.signal);
  try {
    const stamped = opts.saved?.mcpTools;
    const changed = stamped ? changedServers(stamped, toolset.specs) : [];
    if (changed.length > 0) {
      if (!opts.restartChanged) {
        throw new McpError("mcp_changed", changed[0]!,
          `the tools of the MCP ${changed.length === 1 ? "server" : "servers"} ${changed.join(", ")} changed since this trial's checkpoint; --restart-changed continues the trial with the new tools, or restore the server`);
      }
      delete opts.saved!.mcpTools; // the agent stamps the specs it is given
    }
    return await body(toolset);
  } finally {
    await toolset.close();
  }
}
