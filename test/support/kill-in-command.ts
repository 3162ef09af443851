/**
 * Kills a run in the middle of one of its shell commands, as a crash would: the CLI and the
 * command's process group both SIGKILLed while the command sleeps. The command writes its shell's
 * pid (its process group, unsandboxed) to `pidFile` first.
 */
import { readFile } from "node:fs/promises";
import { startCli } from "./cli.js";

export async function killInCommand(args: string[], cwd: string, pidFile: string): Promise<void> {
  const first = startCli(args, { cwd });
  const pgid = Number(await waitForFile(pidFile));
  await new Promise((r) => setTimeout(r, 300)); // inside the command's sleep
  first.child.kill("SIGKILL");
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
  await first.done;
}

/** The trimmed text of `path` once it holds some, polled every 20 ms up to `limitMs`. */
export async function waitForFile(path: string, limitMs = 20_000): Promise<string> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const text = await readFile(path, "utf8").catch(() => "");
    if (text.trim() !== "") return text.trim();
    if (Date.now() > deadline) throw new Error(`${path} did not appear`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
