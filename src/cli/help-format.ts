/**
 * Help text as rhema prints it. yargs renders it, wrapped at the terminal's width — which used
 * to break example commands mid-command (`--input '{"command":` on one line, `"npm test"}'` on
 * the next), so a copied example no longer ran. Examples are therefore registered here: yargs
 * is given a short placeholder it never wraps, and `expandExamples` puts each command back on
 * one line of its own, its description on the next. Also the width help is wrapped at, and
 * yargs' "Unknown arguments" message with one name per unknown flag.
 */
import type { Argv } from "yargs";

/** One example: the command (`$0` is the script name) and what it does. */
export type HelpExample = readonly [command: string, description: string];

const registered: HelpExample[] = [];
const PLACEHOLDER = /^ *<<example (\d+)>> *$/gm;

/** Adds `examples` to a command's help (see the header); returns `y` for chaining. */
export function withExamples<T>(y: Argv<T>, examples: readonly HelpExample[]): Argv<T> {
  let chained = y;
  for (const example of examples) {
    let index = registered.findIndex(([c, d]) => c === example[0] && d === example[1]);
    if (index < 0) index = registered.push(example) - 1;
    chained = chained.example(`<<example ${index}>>`, "");
  }
  return chained;
}

/** `help` with each example placeholder replaced by its command (one line, never wrapped) and its description below it. */
export function expandExamples(help: string, scriptName: string): string {
  return help.replace(PLACEHOLDER, (_line, index: string) => {
    const [command, description] = registered[Number(index)]!;
    return `  ${command.replace(/\$0/g, scriptName)}\n      ${description}`;
  });
}

/** The width help is wrapped at: the terminal's, else `$COLUMNS` (a pipe has no width), else 100; at most 110. */
export function helpWidth(columns: number | undefined, env: Readonly<Record<string, string | undefined>>): number {
  const fromEnv = Number(env.COLUMNS);
  const width = columns ?? (Number.isInteger(fromEnv) && fromEnv >= 40 ? fromEnv : 100);
  return Math.min(110, width);
}

/**
 * yargs names an unknown dashed flag twice, as typed and camel-cased ("Unknown arguments:
 * unknown-flag, unknownFlag"): the camel-cased twin of a name that is also listed is dropped.
 * Any other message is returned as it is.
 */
export function oneNamePerUnknownArgument(message: string): string {
  const match = /^Unknown arguments?: (.*)$/s.exec(message);
  if (!match) return message;
  const names = match[1]!.split(", ");
  const camel = (name: string) => name.replace(/-+([^-])/g, (_m, c: string) => c.toUpperCase());
  const twins = new Set(names.filter((n) => n.includes("-")).map(camel));
  const kept = names.filter((n) => !twins.has(n) || n.includes("-"));
  return `${kept.length === 1 ? "Unknown argument" : "Unknown arguments"}: ${kept.join(", ")}`;
}
