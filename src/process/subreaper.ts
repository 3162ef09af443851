/**
 * The reaper that keeps an unsandboxed command's processes in reach (`--sandbox off`), so that
 * nothing it starts outlives it or rhema — `(setsid cmd &)` included, which leaves the command's
 * process group and, once its parent exits, is reparented to init before anyone looks.
 *
 * Without a PID namespace the kernel offers one tool: a *child subreaper* (`prctl(
 * PR_SET_CHILD_SUBREAPER)`): orphans below it are reparented to it instead of init, so every
 * process a command starts stays its descendant. Node has no `prctl`; perl's `syscall` reaches it,
 * and perl-base is Essential on Debian and Ubuntu. The attribute survives `execve` but not `fork`,
 * so it belongs to a small persistent process: this perl script leads the process group rhema
 * records (held-spawn.ts's wrapper), sets the attribute and a parent-death signal, forks the held
 * command into a process group of its own — so a command that kills its own group (`kill -9 0`)
 * cannot take the reaper with it — and waits for it. rhema's group kill (group-kill.ts) reaches
 * the command all the same: it signals the leader's whole tree, not only its group. When the command exits, what is left of its tree gets SIGTERM, then SIGKILL
 * after a grace period, and is reaped until the reaper has no child left (it says "s" on the
 * control pipe when there was any); then it exits as the command did (the same code, or the same
 * signal raised on itself). When rhema dies, however it dies, the kernel sends it SIGTERM and it
 * SIGKILLs its whole tree (stopped first) and exits; a SIGTERM while rhema lives is the group's
 * own stop (group-kill.ts) and only the command is meant by it.
 *
 * Where there is no perl (or no known prctl number for the CPU), commands run as before, guarded
 * by the death watch (death-watch.ts): a `setsid` escapee can then outlive rhema. The sandbox
 * (bwrap, a PID namespace of its own) needs neither.
 */
import { execFile } from "node:child_process";
import { findOnPath } from "./sandbox-probe.js";

/** Where perl is looked for (the command's PATH is not trusted for the reaper). */
export const REAPER_SEARCH_PATH = "/usr/bin:/bin:/usr/local/bin";
const PROBE_TIMEOUT_MS = 10_000;

/** prctl's system call number, by `process.arch`; absent: no reaper on that CPU. */
const PRCTL_SYSCALL: Readonly<Partial<Record<NodeJS.Architecture, number>>> = {
  x64: 157, arm64: 167, riscv64: 167, loong64: 167, ia32: 172, arm: 172,
};
const PR_SET_PDEATHSIG = 1;
const PR_SET_CHILD_SUBREAPER = 36;
const SIGTERM_NUMBER = 15;

/**
 * $ARGV: prctl's number, rhema's pid, the grace in ms, then the command. Safe signals: a blocking
 * waitpid interrupted by SIGTERM runs the handler, then waits again. `$^F = 3` keeps fd 3 (the
 * control pipe, the holder's) open across exec. `tree` lists the living
 * descendants from /proc; `sweep` stops and kills them until none is left, then reaps the rest.
 * Orphans come to the subreaper, so once the command is reaped, no child left (waitpid: ECHILD)
 * means no descendant left: the common case exits without reading /proc.
 */
const REAPER_SCRIPT = `
my ($nr, $parent, $grace, @cmd) = @ARGV;
$^F = 3; open(my $ctl, ">&=", 3);
sub tree {
  my %kids;
  for my $f (glob "/proc/[0-9]*/stat") {
    open(my $h, "<", $f) or next; my $l = <$h>; close $h;
    my ($state, $ppid) = defined $l ? $l =~ /\\) (\\S) (\\d+)/ : ();
    next if !defined $ppid || $state eq "Z" || $state eq "X";
    my ($p) = $f =~ /(\\d+)/; push @{$kids{$ppid}}, $p;
  }
  my @q = ($$); my @out;
  while (@q) { for (@{$kids{shift @q} || []}) { push @out, $_; push @q, $_ } }
  return @out;
}
sub reap { 1 while waitpid(-1, 1) > 0 }
sub sweep {
  for (;;) { my @t = tree(); last unless @t; kill "STOP", @t; kill "KILL", @t, tree(); reap(); select(undef, undef, undef, 0.005) }
  1 while waitpid(-1, 0) > 0;
}
my $pid;
# The command's own group dies first, at once: a command released just before rhema died must not
# get to run while the tree is read from /proc (milliseconds on a busy machine).
my $orphaned = sub { return if getppid() == $parent; kill "KILL", -$pid if $pid; sweep(); exit 137 };
$SIG{$_} = $orphaned for qw(TERM INT HUP QUIT);
syscall($nr, ${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0);
syscall($nr, ${PR_SET_PDEATHSIG}, ${SIGTERM_NUMBER}, 0, 0, 0);
$orphaned->();
$pid = fork;
if (!defined $pid) { print STDERR "rhema-reaper: cannot fork: $!\\n"; exit 126 }
if ($pid == 0) { $SIG{$_} = "DEFAULT" for qw(TERM INT HUP QUIT); setpgrp(0, 0); exec { $cmd[0] } @cmd; print STDERR "rhema-reaper: $cmd[0]: $!\\n"; exit 127 }
my $status;
for (;;) { my $w = waitpid(-1, 0); if ($w == $pid) { $status = $?; last } if ($w < 0) { $status = 255 << 8; last } }
my $w; 1 while ($w = waitpid(-1, 1)) > 0;
if ($w == 0 && tree()) {
  syswrite($ctl, "s") if $ctl;
  kill "TERM", tree();
  for (1 .. $grace / 10) { reap(); last unless tree(); select(undef, undef, undef, 0.01) }
  sweep();
}
close $ctl if $ctl;
if ($status & 127) { $SIG{$_} = "DEFAULT" for qw(TERM INT HUP QUIT); kill $status & 127, $$; exit 128 + ($status & 127) }
exit($status >> 8);
`;

/** The reaper on this machine: the perl to run and prctl's number. */
export interface Reaper {
  perl: string;
  prctl: number;
}

export type ReaperProbe = { ok: true; reaper: Reaper } | { ok: false; reason: string };

/**
 * The argv that runs `command` (argv, program first) under the reaper, leading its group;
 * `graceMs`: between SIGTERM and SIGKILL for what the command leaves running. Pure.
 */
export function reaperArgv(reaper: Reaper, command: readonly string[], opts: { parentPid: number; graceMs: number }): string[] {
  if (command.length === 0) throw new Error("reaperArgv: the command is empty");
  return [reaper.perl, "-e", REAPER_SCRIPT, "--", String(reaper.prctl), String(opts.parentPid), String(Math.max(0, Math.round(opts.graceMs))), ...command];
}

const cache = new Map<string, Promise<ReaperProbe>>();

/**
 * Whether the reaper can run here: perl found on `path` (default `REAPER_SEARCH_PATH`), a prctl
 * number known for this CPU, and `prctl(PR_SET_CHILD_SUBREAPER)` accepted once. Cached per path;
 * never throws.
 */
export function probeReaper(opts: { path?: string } = {}): Promise<ReaperProbe> {
  const searchPath = opts.path ?? REAPER_SEARCH_PATH;
  let probe = cache.get(searchPath);
  if (!probe) {
    probe = runProbe(searchPath);
    cache.set(searchPath, probe);
  }
  return probe;
}

async function runProbe(searchPath: string): Promise<ReaperProbe> {
  const prctl = process.platform === "linux" ? PRCTL_SYSCALL[process.arch] : undefined;
  if (prctl === undefined) return { ok: false, reason: `no child subreaper on ${process.platform}/${process.arch}` };
  const perl = await findOnPath("perl", searchPath);
  if (perl === null) return { ok: false, reason: `perl is not installed (not found on ${searchPath})` };
  const accepted = await new Promise<boolean>((resolveRun) => {
    execFile(perl, ["-e", `exit(syscall(${prctl}, ${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0) == 0 ? 0 : 1)`], { env: {}, timeout: PROBE_TIMEOUT_MS }, (err) => resolveRun(err === null));
  });
  return accepted ? { ok: true, reaper: { perl, prctl } } : { ok: false, reason: `${perl} could not make a child subreaper (prctl refused)` };
}
