/**
 * The guard that makes an unsandboxed command die with rhema, SIGKILL included: a small `/bin/sh`
 * watcher per command, in a session of its own (a kill of rhema's process group misses it),
 * blocked reading a pipe whose other end only rhema holds. When rhema dies, however it dies, the
 * kernel closes that end; the watcher reads end of file and SIGKILLs the command's process group
 * and every descendant of its leader (setsid escapees included), unless the leader's pid now
 * belongs to another process (its start time differs). The group is stopped (SIGSTOP) first, so
 * it does nothing more while the watcher walks /proc for its descendants, which takes a shell
 * tens of milliseconds a level of the tree on a busy machine (the chaos bench saw a killed
 * command write 50–170 ms after rhema died). When the command is over, rhema dismisses the
 * watcher. No JavaScript signal handler is involved: SIGKILL would skip it.
 *
 * Why not a namespace: `unshare --pid --fork --kill-child` needs root (or a user namespace, which
 * Ubuntu 24.04's AppArmor refuses), and makes the command's bash PID 1, which ignores signals it has
 * no handler for (`kill -9 $$` does nothing) and sees `$$`/`$!` that are not the host's pids. Why not
 * `setpriv --pdeathsig`: it covers the direct child only. The sandbox (bwrap --die-with-parent in a
 * PID namespace of its own, with bwrap as PID 1) needs no watcher.
 */
import { spawn } from "node:child_process";
import type { Writable } from "node:stream";
import type { ProcessGroupIdentity } from "./process-identity.js";

/**
 * $1: pgid (= the leader's pid), $2: the leader's start time (0: unknown). Descendants are found by
 * walking /proc (`ps` where there is none) until no new child turns up; two passes catch a fork
 * racing the first.
 */
const WATCH_SCRIPT = `
trap '' HUP INT QUIT TERM PIPE
IFS= read -r line
[ "$line" = done ] && exit 0
P=$1 T=$2
tree() {
  found=" $P "
  grew=1
  while [ "$grew" = 1 ]; do
    grew=0
    if [ -r /proc/self/stat ]; then rows=$(for f in /proc/[0-9]*/stat; do { IFS= read -r l < "$f"; } 2>/dev/null || continue; p=\${f#/proc/}; r=\${l##*) }; set -- $r; echo "\${p%/stat} $2"; done)
    else rows=$(ps -A -o pid= -o ppid= 2>/dev/null); fi
    while read -r p pp; do
      case "$found" in *" $pp "*) case "$found" in *" $p "*) ;; *) found="$found$p "; grew=1 ;; esac ;; esac
    done <<ROWS
$rows
ROWS
  done
  echo $found
}
for pass in 1 2; do
  if [ -r /proc/$P/stat ]; then
    { IFS= read -r l < /proc/$P/stat; } 2>/dev/null
    r=\${l##*) }; set -- $r; shift 19
    [ "$T" = 0 ] || [ "$1" = "$T" ] || exit 0
    kill -STOP -$P 2>/dev/null
    kill -KILL -$P $(tree) 2>/dev/null
  else
    kill -KILL -$P 2>/dev/null
  fi
done
exit 0
`;

export interface DeathWatch {
  /** The command is over and its group handled: the watcher exits without a signal. */
  dismiss(): void;
}

/** Starts the watcher for `group`. Rejects when /bin/sh cannot start. */
export async function watchForDeath(group: Pick<ProcessGroupIdentity, "pgid" | "startTime">): Promise<DeathWatch> {
  const watcher = spawn("/bin/sh", ["-c", WATCH_SCRIPT, "rhema-watch", String(group.pgid), String(group.startTime)], {
    detached: true, stdio: ["pipe", "ignore", "ignore"], env: {},
  });
  await new Promise<void>((resolveSpawn, reject) => {
    watcher.once("spawn", resolveSpawn);
    watcher.once("error", reject);
  });
  const line = watcher.stdin as Writable;
  line.on("error", () => {});
  // Neither the watcher nor its pipe keeps this process alive; if it exits with the command still
  // running, the pipe closes and the watcher does its job.
  watcher.unref();
  (line as unknown as { unref?: () => void }).unref?.();
  let dismissed = false;
  return {
    dismiss() {
      if (dismissed) return;
      dismissed = true;
      line.end("done\n");
    },
  };
}
