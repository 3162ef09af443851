/**
 * One entry point for "a policy named on the command line or in a task": `preset:NAME` or a
 * file path. The runner defaults to `preset:read-only`.
 */
import { resolve } from "node:path";
import { type LoadedPolicy, PolicyFileError, loadPolicyFile } from "./policy-file.js";
import { PRESET_NAMES, isPresetName, presetPolicy } from "./presets.js";

export const PRESET_PREFIX = "preset:";

/**
 * Loads `spec`: `preset:read-only` | `preset:workspace-write` | `preset:ci`, or a YAML file
 * (relative paths resolve against `baseDir`, which the caller supplies — no ambient cwd here).
 */
export async function loadPolicy(spec: string, options: { baseDir?: string } = {}): Promise<LoadedPolicy> {
  if (spec.startsWith(PRESET_PREFIX)) {
    const name = spec.slice(PRESET_PREFIX.length);
    if (!isPresetName(name)) {
      throw new PolicyFileError(spec, [{ file: spec, message: `unknown preset \`${name}\`; the presets are ${PRESET_NAMES.join(", ")}` }]);
    }
    return presetPolicy(name);
  }
  const file = options.baseDir === undefined ? spec : resolve(options.baseDir, spec);
  return loadPolicyFile(file, {});
}
