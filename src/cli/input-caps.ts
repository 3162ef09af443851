/** The prompt and image size caps as the CLI takes them: the defaults, or `RHEMA_MAX_PROMPT_BYTES` / `RHEMA_MAX_IMAGE_BYTES`. */
import { RhemaError } from "../core/errors.js";
import { DEFAULT_INPUT_CAPS, type InputCaps } from "../runner/tasks/task-file.js";

/** Reads the caps from the environment; a value that is not a whole number from 1 up is a usage error quoting it. */
export function inputCapsFromEnv(env: Readonly<Record<string, string | undefined>>): InputCaps {
  const read = (name: string, fallback: number): number => {
    const text = env[name];
    if (text === undefined || text === "") return fallback;
    if (!/^\d+$/.test(text.trim()) || Number(text) < 1) throw new RhemaError("usage", `Expected ${name} to be a whole number of bytes from 1 up, got "${text}"`);
    return Number(text);
  };
  return {
    maxPromptBytes: read("RHEMA_MAX_PROMPT_BYTES", DEFAULT_INPUT_CAPS.maxPromptBytes),
    maxImageBytes: read("RHEMA_MAX_IMAGE_BYTES", DEFAULT_INPUT_CAPS.maxImageBytes),
  };
}
