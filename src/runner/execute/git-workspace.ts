/**
 * A git workspace: a clone of the run's mirror (git-mirror.ts) at one commit, detached, whole
 * inside the workspace. Not `git worktree add` (its index and HEAD would live in the mirror's
 * `.git/worktrees/`, outside the workspace and hidden in the sandbox), nor `clone --shared` (its
 * objects would stay in the mirror, which the sandbox hides with the run directory: git inside it
 * would find none). A local clone hard-links the mirror's object files instead — as cheap as
 * `--shared` on one file system (measured: docs/tasks.md) — so `git log`, `git diff` and `git
 * commit` work in the sandbox with nothing but the workspace mounted. Git never writes an object
 * file in place and rhema's file tools replace files whole, so the links are not written through.
 *
 * The agent sees the commit's history and nothing later: the clone's remote and every ref are
 * removed (`git log --all` shows no branch, tag or later commit). The later commits' objects still
 * sit unreferenced in the linked packs.
 */
import { rm } from "node:fs/promises";
import { dirname } from "node:path";
import { RhemaError } from "../../core/errors.js";
import { GitFailed, neutralGitEnv, runGit } from "./git-mirror.js";
import { asOutputError } from "../run-dir/output-guard.js";

/** Replaces `workspace` by a clone of `mirror` checked out at `commit` (detached, no refs). */
export async function cloneAtCommit(mirror: string, commit: string, workspace: string, hostEnv: Readonly<Record<string, string | undefined>>): Promise<void> {
  await rm(workspace, { recursive: true, force: true }).catch((err: unknown) => { throw asOutputError(err, workspace, "remove"); });
  const env = neutralGitEnv(hostEnv, dirname(workspace));
  const inWorkspace = (args: string[], input?: string) => runGit(["-C", workspace, ...args], env, dirname(workspace), input);
  try {
    await runGit(["clone", "--no-checkout", "--quiet", "--template=", "--", mirror, workspace], env, dirname(workspace));
    await inWorkspace(["remote", "remove", "origin"]);
    const refs = (await inWorkspace(["for-each-ref", "--format=delete %(refname)"])).trim();
    if (refs !== "") await inWorkspace(["update-ref", "--stdin"], `${refs}\n`);
    await inWorkspace(["checkout", "--quiet", "--detach", commit]);
    await inWorkspace(["reflog", "expire", "--expire=now", "--all"]);
  } catch (err) {
    if (err instanceof GitFailed) throw new RhemaError("setup_failed", `workspace.git: cannot check out ${commit} into the workspace: ${err.message}`);
    throw err;
  }
}
