/**
 * A stand-in for rhema in the tests that kill it: a child process that runs one command through
 * the shell tool and prints the result as one JSON line. argv: a JSON `{ workspace, command,
 * env, sandbox? }`. Says `started` on stdout once the command's group exists.
 */
import { shellTool } from "../../src/tools/shell.js";
import type { SandboxPlacement } from "../../src/process/sandbox.js";

const { workspace, command, env, sandbox } = JSON.parse(process.argv[2]!) as {
  workspace: string; command: string; env: Record<string, string>; sandbox?: SandboxPlacement;
};
const tool = shellTool({ env, ...(sandbox ? { sandbox } : {}) });
const result = await tool.run({ command }, {
  workspace, signal: new AbortController().signal,
  onStarted: async (group) => void process.stdout.write(`started ${JSON.stringify(group)}\n`),
});
process.stdout.write(`${JSON.stringify(result)}\n`);
