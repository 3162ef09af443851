/**
 * `rhema cassette show FILE [--json]`: a cassette (issue 25) for people — who recorded it and
 * when, then each exchange: the request's hash and size, what was made stable in it, its last
 * message, the answer (text, tool calls, stop reason), the billed usage and the time it took.
 * `--json` prints the cassette as read (its header and exchanges), one object. A file a killed
 * recording cut is read up to its last whole exchange, and says so. Nothing is written.
 */
import { resolve } from "node:path";
import type { Argv } from "yargs";
import { RhemaError } from "../core/errors.js";
import type { CassetteExchange } from "../core/cassette-exchange.js";
import { readCassette, type Cassette } from "../store/cassette-file.js";
import { EXIT_OK, type ExitCode } from "./exit-codes.js";
import { print, type CliIo } from "./io.js";
import { withExamples } from "./help-format.js";

export interface CassetteShowArgs {
  file: string;
  json?: boolean | undefined;
}

export function cassetteShowOptions<T>(y: Argv<T>) {
  return withExamples(y, [
    ["$0 cassette show cassettes/arithmetic/fix-add/default/1.jsonl", "what a trial's recording asked and was answered"],
    ["$0 cassette show cassettes/arithmetic/fix-add/default/1.jsonl --json", "the same, as JSON"],
  ])
    .positional("file", { type: "string", demandOption: true, describe: "a cassette (DIR/<suite>/<id>/<variant|default>/<n>.jsonl)" })
    .option("json", { type: "boolean", default: false, describe: "print the cassette as read, as one JSON object" });
}

export async function cassetteShowCommand(args: CassetteShowArgs, io: CliIo): Promise<ExitCode> {
  const path = resolve(io.cwd, args.file);
  const cassette = await readCassette(path);
  if (cassette === null) throw new RhemaError("usage", `${args.file}: no such cassette`);
  print(io.stdout, args.json === true ? JSON.stringify(cassette, null, 2) : describeCassette(cassette).join("\n"));
  return EXIT_OK;
}

/** The cassette as lines for people (pure). */
export function describeCassette(cassette: Cassette): string[] {
  const { header, exchanges } = cassette;
  const lines = [
    `${cassette.path}: ${header.provider}${header.model === null ? "" : ` ${header.model}`}, recorded ${header.recordedAt}` +
      `${header.trialStartedAt ? ` (trial started ${header.trialStartedAt})` : ""}, ${exchanges.length} exchange${exchanges.length === 1 ? "" : "s"}`,
  ];
  if (cassette.tornTail) lines.push("  the last line was cut short (a recording killed mid-write): read up to the exchange before it");
  for (const exchange of exchanges) lines.push(...describeExchange(exchange));
  return lines;
}

function describeExchange(e: CassetteExchange): string[] {
  const who = e.who === "worker" ? " (compaction worker)" : "";
  const usage = e.usage === null ? "no usage reported"
    : `in ${e.usage.inputTokens}, cache read ${e.usage.cacheReadTokens}, cache write ${e.usage.cacheWriteTokens}, out ${e.usage.outputTokens}`;
  return [
    `#${e.exchange}${who} ${e.hash.slice(0, 19)}…  ${e.request.messages.length} messages, ${e.request.tools.length} tools; ${usage}; ${e.timing.totalMs} ms`,
    ...(e.normalised.length > 0 ? [`  made stable: ${e.normalised.join(", ")}`] : []),
    `  asked:    ${clip(lastMessage(e.request.messages))}`,
    ...answer(e).map((line) => `  answered: ${clip(line)}`),
  ];
}

/** The request's last message as one line: its role and the text (or tool result) it ends with. */
function lastMessage(messages: readonly unknown[]): string {
  const last = messages.at(-1) as { role?: string; content?: Array<Record<string, unknown>> } | undefined;
  if (last === undefined) return "(no messages)";
  const block = last.content?.at(-1);
  const text = block === undefined ? "" : typeof block.text === "string" ? block.text : typeof block.content === "string" ? `[${String(block.type)}] ${block.content}` : JSON.stringify(block);
  return `${last.role ?? "?"}: ${text}`;
}

function answer(e: CassetteExchange): string[] {
  const out: string[] = [];
  const text = e.events.flatMap((ev) => (ev.type === "text" ? [ev.delta] : [])).join("");
  if (text !== "") out.push(`text ${JSON.stringify(text)}`);
  for (const ev of e.events) if (ev.type === "tool_call") out.push(`${ev.name} ${JSON.stringify(ev.input)}`);
  const stop = e.events.find((ev) => ev.type === "stop");
  out.push(`stop ${stop?.type === "stop" ? stop.reason : "(none)"}`);
  return out;
}

function clip(text: string, max = 160): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
