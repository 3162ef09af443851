/**
 * A stand-in for rhema in the sandbox escape tests, run as root or (through setpriv) as nobody
 * from a copy in a 0755 folder: probes the sandbox, then runs each attempt (a bash script) in its
 * own sandbox — today's `bwrapArgv` or the old one (`legacyBwrapArgv`) — and prints one JSON
 * line: the probe's answer and each attempt's exit code and output. Its own environment is
 * rhema's: it holds the secret an attempt goes after in /proc/<its pid>/environ, and names the
 * home, runtime folder and credential file the sandbox hides (passed as `hostEnv`, as the CLI does).
 * argv: a JSON `{ form, workspace, runDir, network, attempts: [{ name, script }] }`.
 */
import { execFile } from "node:child_process";
import { bwrapArgv } from "../../src/process/sandbox.js";
import { probeSandbox } from "../../src/process/sandbox-probe.js";
import { legacyBwrapArgv } from "./legacy-sandbox.js";

interface Request {
  form: "legacy" | "current";
  workspace: string;
  runDir: string;
  network: boolean;
  attempts: Array<{ name: string; script: string }>;
}

const req = JSON.parse(process.argv[2]!) as Request;
const probe = await probeSandbox();
if (!probe.ok) {
  process.stdout.write(`${JSON.stringify({ probe })}\n`);
  process.exit(0);
}
const hostEnv = { ...process.env };
const env: Record<string, string> = { PATH: "/usr/local/bin:/usr/bin:/bin", VICTIM_PID: String(process.pid) };
if (process.env.HOME !== undefined) env.HOME = process.env.HOME;
const results: Record<string, { code: number | null; out: string }> = {};
for (const { name, script } of req.attempts) {
  const spec = { bwrap: probe.bwrap, workspace: req.workspace, network: req.network, hiddenPaths: [req.runDir], env };
  const argv = req.form === "legacy"
    ? legacyBwrapArgv(spec, ["bash", "-c", script])
    : bwrapArgv({ ...spec, isolation: probe.isolation, hostEnv }, ["bash", "-c", script]);
  results[name] = await new Promise((resolveRun) => {
    execFile(argv[0]!, argv.slice(1), { env: {}, encoding: "utf8", timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : null) : 0;
      resolveRun({ code, out: (stdout + stderr).trim() });
    });
  });
}
process.stdout.write(`${JSON.stringify({ probe, results })}\n`);
