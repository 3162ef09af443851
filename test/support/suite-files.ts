/** Writes small task suites into temp folders for end-to-end tests. */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

export async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
}

/** A policy that lets shell `echo`/`sleep`/`cat`/`test` run and writes go to tags.txt and out/. */
export const OPEN_POLICY = `version: 1
default: deny
rules:
  - allow: { tools: [read_file, list_dir, glob, grep] }
  - allow: { shell: ["echo *", "sleep *", "cat *", "test *", "true"] }
  - allow: { paths: ["tags.txt", "out/**"] }
`;

/** OPEN_POLICY that also lets shell `trap` run: for tasks whose commands ignore SIGINT and SIGTERM (`trap '' INT TERM; ...`). */
export const TRAP_POLICY = OPEN_POLICY.replace('"true"]', '"true", "trap *"]');

/** A scripted task whose steps each append a unique tag with the shell, then sleep a little. */
export function taggingTask(id: string, steps: number, opts: { sleep?: number; chunkDelayMs?: number; extra?: string } = {}): string {
  const commands = Array.from({ length: steps }, (_, k) => `echo ${id}-${k} >> tags.txt && sleep ${opts.sleep ?? 0}`);
  return shellStepsTask(commands, {
    ...(opts.chunkDelayMs ? { chunkDelayMs: opts.chunkDelayMs } : {}),
    rest: `checks:\n  - { name: tags written, run: "test $(wc -l < tags.txt) -ge 1" }\n${opts.extra ?? ""}`,
  });
}

/** A scripted task (policy ../policy.yaml) that runs each command with the shell, one a step, then says done; `rest` is YAML after the script. */
export function shellStepsTask(commands: readonly string[], opts: { chunkDelayMs?: number; rest: string }): string {
  const script = commands.map((command, k) =>
    `    - say: step ${k}\n      call: shell\n      input: { command: ${JSON.stringify(command)} }\n` +
    (opts.chunkDelayMs ? `      chunkDelayMs: ${opts.chunkDelayMs}\n` : "")).join("");
  return `prompt: Append the tags.
policy: ../policy.yaml
model:
  provider: scripted
  script:
${script}    - say: done
${opts.rest}`;
}

/**
 * A long scripted task (policy ../policy.yaml, workspace ../ws holding notes.txt) that `cat`s the
 * notes `steps` times, each step with a long say, under a transcript budget of `budget` tokens
 * in blocks of `block`: small enough a budget and it flushes (compacts) as it goes.
 */
export function compactingTask(opts: { steps: number; budget: number; block: number }): string {
  const script = Array.from({ length: opts.steps }, (_, k) =>
    `    - say: "reading part ${k} of the log: ${"the quick brown fox ".repeat(20)}"\n      call: shell\n      input: { command: "cat notes.txt" }\n`).join("");
  return `prompt: Read the notes, part by part.
policy: ../policy.yaml
workspace: { from: ../ws }
transcript: { budgetTokens: ${opts.budget}, blockTokens: ${opts.block} }
limits: { maxSteps: ${opts.steps + 2} }
model:
  provider: scripted
  script:
${script}    - say: done
`;
}
