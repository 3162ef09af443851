/**
 * The run's mirrors of git workspaces' repositories (`workspace.git`): one bare mirror per
 * source under `<runDir>/git-mirrors/<sha256 of the URL or path, 24 hex>.git`, made by
 * `git clone --mirror` the first time a trial needs it, and fetched once by each later rhema
 * process that uses it (a resume), so a branch is resolved against the source as it is now. Every
 * trial's workspace is cloned from the mirror (git-workspace.ts), never from the source:
 *
 *   a URL    is fetched with the host's network and the host's git setup (credentials, ssh keys,
 *            `url.*.insteadOf`), like setup commands; never a prompt (`GIT_TERMINAL_PROMPT=0`)
 *   a path   is copied (`--no-hardlinks`): the workspaces' hard-linked objects are then the run's
 *            own, so nothing an agent does in its workspace can reach the source repository
 *
 * A fetch that fails on resume (no network) is no failure while the ref still resolves in the
 * mirror; a mirror cut short by a kill is a temp folder, made again. The run directory's lock
 * says one rhema uses these mirrors; `GitMirrors` serialises the trials of that one process.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError, errnoCode } from "../../core/errors.js";
import { gitSourceName, type GitSource } from "../tasks/git-source.js";
import { asOutputError } from "../run-dir/output-guard.js";
import { asHostUser } from "../../process/user-namespace.js";

const STDERR_CHARS = 2_000;

/** Settings on every call: no config of the machine's or a repository's decides what runs. */
const NEUTRAL_SETTINGS = [
  "core.hooksPath=/dev/null", "core.fsmonitor=false", "core.autocrlf=false", "gc.auto=0", "safe.directory=*", "advice.detachedHead=false",
].flatMap((setting) => ["-c", setting]);

/** A mirror made ready for this process, and what its refresh said when it failed. */
interface ReadyMirror {
  path: string;
  fetchProblem: string | null;
}

export class GitMirrors {
  private readonly ready = new Map<string, Promise<ReadyMirror>>();

  /** `dir`: `<runDir>/git-mirrors`; `hostEnv`: rhema's own environment (a URL is fetched with it). */
  constructor(private readonly dir: string, private readonly hostEnv: Readonly<Record<string, string | undefined>>) {}

  /**
   * The mirror of `source` and the commit a trial checks out: `recorded` (its state's, from its
   * first run) if the mirror holds it, else `source.ref` resolved now. A ref or commit that
   * cannot be found is `setup_failed` naming the repository and the ref.
   */
  async commitFor(source: GitSource, recorded: string | null): Promise<{ mirror: string; commit: string }> {
    const mirror = await this.mirrorOf(source);
    const name = gitSourceName(source);
    const fetched = mirror.fetchProblem === null ? "" : ` (the mirror could not be refreshed: ${mirror.fetchProblem})`;
    const wanted = recorded ?? source.ref;
    const commit = await resolveCommit(mirror.path, wanted, this.hostEnv);
    if (commit === null) {
      const what = recorded === null
        ? `ref "${source.ref}" was not found in ${name}: name a commit SHA, branch or tag of that repository`
        : `commit ${recorded} (ref "${source.ref}" as resolved on the trial's first run) is no longer in ${name}: rerun with --restart to resolve the ref again`;
      throw new RhemaError("setup_failed", `workspace.git: ${what}${fetched}`);
    }
    return { mirror: mirror.path, commit };
  }

  private mirrorOf(source: GitSource): Promise<ReadyMirror> {
    const path = join(this.dir, `${createHash("sha256").update(gitSourceName(source)).digest("hex").slice(0, 24)}.git`);
    let ready = this.ready.get(path);
    if (!ready) {
      ready = this.makeReady(source, path);
      this.ready.set(path, ready);
      // A failed clone is tried again by the next trial that needs it.
      ready.catch(() => this.ready.delete(path));
    }
    return ready;
  }

  private async makeReady(source: GitSource, path: string): Promise<ReadyMirror> {
    const exists = await stat(join(path, "HEAD")).then(() => true, () => false);
    if (exists) {
      try {
        await runGit(["--git-dir", path, "fetch", "--prune", "--quiet", "origin"], this.envFor(source), this.dir);
        return { path, fetchProblem: null };
      } catch (err) {
        if (err instanceof GitFailed) return { path, fetchProblem: err.message };
        throw err;
      }
    }
    const temp = `${path}.tmp`;
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await rm(temp, { recursive: true, force: true });
    } catch (err) {
      throw asOutputError(err, this.dir, "write");
    }
    const from = source.kind === "url" ? ["--", source.url] : ["--no-hardlinks", "--", source.path];
    try {
      await runGit(["clone", "--mirror", "--quiet", "--template=", ...from, temp], this.envFor(source), this.dir);
    } catch (err) {
      if (err instanceof GitFailed) throw new RhemaError("setup_failed", `workspace.git: cannot mirror ${gitSourceName(source)}: ${err.message}`);
      throw err;
    }
    await rename(temp, path).catch((err: unknown) => { throw asOutputError(err, path, "write"); });
    return { path, fetchProblem: null };
  }

  /** A URL is fetched as the host would (its credentials and ssh setup); a path with no config of the machine's. */
  private envFor(source: GitSource): Record<string, string> {
    return source.kind === "url" ? hostGitEnv(this.hostEnv) : neutralGitEnv(this.hostEnv, this.dir);
  }
}

/** The full commit id `rev` names in the repository at `gitDir`, or null when it names none. */
async function resolveCommit(gitDir: string, rev: string, hostEnv: Readonly<Record<string, string | undefined>>): Promise<string | null> {
  try {
    const out = await runGit(["--git-dir", gitDir, "rev-parse", "--verify", "--quiet", `${rev}^{commit}`], neutralGitEnv(hostEnv, gitDir), gitDir);
    return out.trim();
  } catch (err) {
    if (err instanceof GitFailed) return null;
    throw err;
  }
}

/** Git's environment without any config of the machine's or the user's. */
export function neutralGitEnv(hostEnv: Readonly<Record<string, string | undefined>>, home: string): Record<string, string> {
  return {
    PATH: hostEnv.PATH ?? "/usr/local/bin:/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: home,
    GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C",
  };
}

function hostGitEnv(hostEnv: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(hostEnv)) if (value !== undefined && !key.startsWith("GIT_")) env[key] = value;
  return { ...env, GIT_TERMINAL_PROMPT: "0", GIT_SSH_COMMAND: hostEnv.GIT_SSH_COMMAND ?? "ssh -o BatchMode=yes", LC_ALL: "C" };
}

/** Git exited non-zero (or is not installed): its message, for the task's error. */
export class GitFailed extends Error {}

/** Runs git with `env` in `cwd` (`input` on its stdin); its stdout, or `GitFailed` with its stderr. */
export function runGit(args: string[], env: Record<string, string>, cwd: string, input = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    // As the host user where rhema runs in its own user namespace: a fetch over ssh finds the user's keys.
    const [program, ...rest] = asHostUser(["git", ...NEUTRAL_SETTINGS, ...args]);
    const child = spawn(program!, rest, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < STDERR_CHARS) stderr += chunk.toString("utf8");
    });
    child.on("error", (err) => reject(errnoCode(err) === "ENOENT" ? new GitFailed("git was not found on PATH: a git workspace needs git") : err));
    child.on("close", (code, signal) => {
      if (code === 0) resolve(stdout);
      else reject(new GitFailed(`git ${args.find((a) => !a.startsWith("-") && !a.includes("/")) ?? args[0]} ${code === null ? `was killed (${signal})` : `exited ${code}`}: ${stderr.trim().slice(0, STDERR_CHARS) || "no message"}`));
    });
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}
