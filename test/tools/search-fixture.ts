/** A workspace tree for the glob and grep tests: nested .gitignore files, hidden files, links. */
import { mkdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { makeTree } from "./tool-harness.js";

export async function searchFixture(ws: string): Promise<void> {
  await makeTree(ws, {
    ".gitignore": "node_modules/\n*.log\n/build\n!keep.log\n",
    ".git/config": "needle in git\n",
    ".github/workflows/ci.yml": "run: needle\n",
    "src/.gitignore": "generated.ts\n/local/\n",
    "src/a.ts": "export const needle = 1;\nconst other = 2;\n",
    "src/b.tsx": "// Needle in caps\n",
    "src/.hidden.ts": "needle hidden\n",
    "src/generated.ts": "needle generated\n",
    "src/local/x.ts": "needle local\n",
    "src/sub/c.ts": "a\nb\nneedle\nc\nd\n",
    "src/sub/generated.ts": "needle sub generated\n",
    "src/sub/trace.log": "needle log\n",
    "lib/local/y.ts": "needle lib local\n",
    "lib/build/z.js": "needle lib build\n",
    "build/out.js": "needle build\n",
    "node_modules/m/index.ts": "needle module\n",
    "debug.log": "needle debug\n",
    "keep.log": "needle keep\n",
    "bin/tool": Buffer.from("needle\0binary\n"),
  });
  await symlink("src/a.ts", join(ws, "link.ts"));
  await symlink("src", join(ws, "linkdir"));
  await mkdir(join(ws, "empty"));
}

/** Every file the searches should see in searchFixture, sorted. */
export const VISIBLE_FILES = [
  ".github/workflows/ci.yml",
  ".gitignore",
  "bin/tool",
  "keep.log",
  "lib/build/z.js",
  "lib/local/y.ts",
  "src/.gitignore",
  "src/.hidden.ts",
  "src/a.ts",
  "src/b.tsx",
  "src/sub/c.ts",
];
