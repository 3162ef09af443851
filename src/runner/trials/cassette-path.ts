/**
 * Where a trial's cassette lives in a folder of cassettes (issue 25): `DIR/<suite>/<id>/<variant|default>/<n>.jsonl`,
 * the trial folder's own segments — so a cassette's last four segments name its trial's folder in a run directory.
 */
import { join } from "node:path";
import { trialFolderSegments, type TrialKey } from "./trial-key.js";

/** Where trial `key`'s cassette lives under `dir`. */
export function cassettePath(dir: string, key: TrialKey): string {
  const [suite, id, variant, repeat] = trialFolderSegments(key);
  return join(dir, suite, id, variant, `${repeat}.jsonl`);
}
