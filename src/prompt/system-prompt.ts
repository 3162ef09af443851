/**
 * The system prompt: a built-in template rendered with the environment report. The report is
 * conversation state — rendered once, stamped into the session at the first turn, and reused
 * byte for byte on resume — so it must depend only on the facts passed in here.
 */

export interface EnvironmentFacts {
  workspace: string;
  platform: string;
  shell: string;
  /** The conversation's start, as YYYY-MM-DD. */
  date: string;
  tools: string[];
  /** The MCP servers whose tools the model has (`mcp__<server>__<tool>`), by name only (no line without). */
  mcpServers?: string[];
  /** Project instructions from the workspace root (AGENTS.md), when present. */
  projectInstructions?: { file: string; text: string };
  /** The OS sandbox shell commands run in, when they run in one (no line without). */
  sandbox?: { network: boolean };
}

/** The largest AGENTS.md taken into the prompt; longer files are cut with a note. */
export const MAX_PROJECT_INSTRUCTIONS_BYTES = 32 * 1024;

export const DEFAULT_SYSTEM_TEMPLATE = `You are rhema, a coding agent working non-interactively on a task in a software project.
Nobody will answer questions during the task: decide, act with the tools, and finish.

How to work:
- Read before you change: look at the files involved and the tests that cover them.
- Make the smallest change that does the task; keep the project's style.
- Check your work with the project's own commands (tests, build) when the policy allows them.
- A tool call may be denied by the run's policy; the result says why. Do not retry a denied
  call in another form; find an allowed way or explain what you could not do.
- Finish with a short summary of what you changed and how you checked it.

{{environment}}`;

export class TemplateError extends Error {}

export function renderEnvironmentReport(facts: EnvironmentFacts): string {
  const lines = [
    "# Environment",
    `Workspace: ${facts.workspace}`,
    `Platform: ${facts.platform}`,
    `Shell: ${facts.shell}`,
    `Date: ${facts.date}`,
    `Tools: ${facts.tools.join(", ")}`,
  ];
  if (facts.mcpServers && facts.mcpServers.length > 0) lines.push(`MCP servers: ${facts.mcpServers.join(", ")} (their tools are named mcp__<server>__<tool>)`);
  if (facts.sandbox) lines.push(sandboxLine(facts.sandbox.network));
  if (facts.projectInstructions) {
    lines.push("", `# Project instructions (${facts.projectInstructions.file})`, facts.projectInstructions.text.trimEnd());
  }
  return lines.join("\n");
}

/** What the model must know of the sandbox: where writes fail, what is discarded, whether the network is there. */
function sandboxLine(network: boolean): string {
  return "Sandbox: shell commands run in an OS sandbox (bubblewrap): only the workspace is writable and kept; " +
    "/tmp and $HOME are private and emptied after each command; writes anywhere else fail (read-only file system); " +
    (network ? "the network is open." : "there is no network (connections fail, 127.0.0.1 included).");
}

/**
 * Fills `{{name}}` placeholders; an unknown placeholder is a `TemplateError`, so a template
 * typo fails construction instead of reaching the model.
 */
export function renderTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{\s*([A-Za-z_][\w]*)\s*\}\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new TemplateError(`unknown placeholder {{${name}}} (known: ${Object.keys(values).join(", ")})`);
    return value;
  });
}

export function renderSystemPrompt(template: string, environment: string): string {
  return renderTemplate(template, { environment });
}

/** Cuts project instructions to the cap, on a character boundary, saying so. */
export function capProjectInstructions(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= MAX_PROJECT_INSTRUCTIONS_BYTES) return text;
  const cut = bytes.subarray(0, MAX_PROJECT_INSTRUCTIONS_BYTES).toString("utf8").replace(/\uFFFD$/, "");
  return `${cut}\n[… cut at ${MAX_PROJECT_INSTRUCTIONS_BYTES} bytes of ${bytes.length}]`;
}
