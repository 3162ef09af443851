/**
 * The wrappers whose options are fully described by a spec: programs that run the command
 * given in their operands (`nice -n 5 CMD`, `ionice -c3 CMD`, `taskset 0x3 CMD`), maybe after
 * fixed operands of their own (timeout's duration, chroot's root). Data only; shell-wrappers.ts
 * reads it.
 */
import type { OptionSpec } from "./command-options.js";

export interface WrapperSpec {
  options: OptionSpec;
  /** Operands of the wrapper's own before the command (`timeout DURATION`, `chroot ROOT`). */
  positionals?: number;
  /** Options with which the wrapper runs no command (`taskset -p MASK PID`, `command -v x`). */
  noCommand?: readonly string[];
  /** Options whose value is a shell command line (`flock -c '…'`). */
  scriptOptions?: readonly string[];
  /** Options whose value is a file the wrapper writes (`strace -o F`). */
  writeOptions?: readonly string[];
  /** Options whose value is the directory the command runs in (`unshare --wd D`). */
  directoryOptions?: readonly string[];
  /** Runs the command as someone else or with other powers: the wrapper must be allowed itself. */
  guarded?: boolean;
  /** With no command the wrapper starts a shell that reads its commands from its input. */
  bareRunsShell?: boolean;
}

const none: OptionSpec = { flags: "", withValue: "" };

export const SPEC_WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  command: { options: { flags: "pvV", withValue: "" }, noCommand: ["v", "V"] },
  builtin: { options: none },
  exec: { options: { flags: "cl", withValue: "a" } },
  nohup: { options: none },
  time: { options: { flags: "pv", withValue: "f" } },
  nice: { options: { flags: "", withValue: "n", longWithValue: ["adjustment"] } },
  stdbuf: { options: { flags: "", withValue: "ioe", longWithValue: ["input", "output", "error"] } },
  setsid: { options: { flags: "cfw", withValue: "", longFlags: ["ctty", "fork", "wait"] } },
  coproc: { options: none },
  busybox: { options: none },
  toybox: { options: none },
  timeout: {
    options: { flags: "v", withValue: "sk", longFlags: ["preserve-status", "foreground", "verbose"], longWithValue: ["signal", "kill-after"] },
    positionals: 1,
  },
  ionice: {
    options: { flags: "t", withValue: "cnpPu", longFlags: ["ignore"], longWithValue: ["class", "classdata", "pid", "pgid", "uid"] },
    noCommand: ["p", "P", "u", "pid", "pgid", "uid"],
  },
  taskset: {
    options: { flags: "acp", withValue: "", longFlags: ["all-tasks", "cpu-list", "pid"] },
    positionals: 1,
    noCommand: ["p", "pid"],
  },
  chrt: {
    options: {
      flags: "abdefiormpRv", withValue: "TPD",
      longFlags: ["all-tasks", "batch", "deadline", "fifo", "idle", "other", "rr", "ext", "max", "pid", "reset-on-fork", "verbose"],
      longWithValue: ["sched-runtime", "sched-period", "sched-deadline"],
    },
    positionals: 1,
    noCommand: ["m", "max", "p", "pid"],
  },
  flock: {
    options: {
      flags: "sxeunoF", withValue: "wEc",
      longFlags: ["shared", "exclusive", "unlock", "nonblock", "nb", "close", "no-fork", "verbose"],
      longWithValue: ["wait", "timeout", "conflict-exit-code", "command"],
    },
    positionals: 1,
    scriptOptions: ["c", "command"],
  },
  setpriv: {
    options: {
      flags: "d", withValue: "",
      longFlags: ["clear-groups", "init-groups", "keep-groups", "no-new-privs", "reset-env", "dump"],
      longWithValue: [
        "groups", "inh-caps", "ambient-caps", "bounding-set", "pdeathsig", "regid", "reuid", "rgid", "ruid", "egid", "euid",
        "securebits", "selinux-label", "apparmor-profile", "landlock-access", "landlock-rule",
      ],
    },
    noCommand: ["d", "dump"],
    guarded: true,
  },
  prlimit: {
    options: {
      flags: "", withValue: "po", optionalValue: "AcdefilmnqrstuvxyE",
      longFlags: ["noheadings", "raw", "verbose"],
      longWithValue: ["pid", "output"],
      longOptionalValue: [
        "as", "core", "cpu", "data", "fsize", "locks", "memlock", "msgqueue", "nice", "nofile", "nproc", "rss", "rtprio",
        "rttime", "sigpending", "stack",
      ],
    },
    noCommand: ["p", "pid"],
  },
  unshare: {
    options: {
      flags: "muinpUCTfrcl", withValue: "SGRw",
      longFlags: ["fork", "map-root-user", "map-current-user", "map-auto", "monotonic", "boottime", "load-interp"],
      longWithValue: ["setuid", "setgid", "root", "wd", "propagation", "setgroups", "map-user", "map-group", "map-users", "map-groups"],
      longOptionalValue: ["mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "kill-child", "mount-proc", "mount-binfmt"],
    },
    directoryOptions: ["w", "wd"],
    guarded: true,
    bareRunsShell: true,
  },
  nsenter: {
    options: {
      flags: "FZ", withValue: "tSG", optionalValue: "muinpUCTrw",
      longFlags: ["all", "preserve-credentials", "no-fork", "follow-context"],
      longWithValue: ["target", "setuid", "setgid", "env"],
      longOptionalValue: ["mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "root", "wd"],
    },
    guarded: true,
    bareRunsShell: true,
  },
  chroot: {
    options: { flags: "", withValue: "", longFlags: ["skip-chdir"], longWithValue: ["userspec", "groups"] },
    positionals: 1,
    guarded: true,
    bareRunsShell: true,
  },
  strace: {
    options: {
      flags: "cCdDfFhiknqrtTvVwxyzZ", withValue: "abeEIoOpPsSuUX",
      longFlags: ["summary-only", "summary", "follow-forks", "output-separately", "seccomp-bpf", "no-abbrev", "quiet", "timestamps"],
      longWithValue: ["output", "trace", "signal", "attach", "user", "string-limit", "decode-fds", "env", "status", "trace-path"],
    },
    noCommand: ["p", "attach"],
    writeOptions: ["o", "output"],
  },
  ltrace: {
    options: {
      flags: "bcCfhiLrStTV", withValue: "aAeDlnopsuwxF",
      longFlags: ["demangle", "no-signals"], longWithValue: ["output", "library", "config", "indent", "align"],
    },
    noCommand: ["p"],
    writeOptions: ["o", "output"],
  },
};
