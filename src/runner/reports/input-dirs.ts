/** The run directories a report command reads (merge, compare, trend): each given once. */
import { RhemaError } from "../../core/errors.js";
import { canonicalPath } from "../tasks/canonical-path.js";

/** Two inputs that are one directory (the same path twice, a link to another input): exit 2 naming both, then `advice`. */
export async function checkDistinctDirs(dirs: readonly string[], advice: string): Promise<void> {
  const seen = new Map<string, string>();
  for (const dir of dirs) {
    const real = await canonicalPath(dir);
    const first = seen.get(real);
    if (first !== undefined) {
      const as = first === dir ? `twice as ${dir}` : `twice: as ${first} and as ${dir}`;
      throw new RhemaError("usage", `The run directory ${real} is given ${as}: ${advice}`);
    }
    seen.set(real, dir);
  }
}
