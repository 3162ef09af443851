/**
 * `rhema bench calibrate`: fits a calibrated token counter's factors from requests with their
 * billed prompt tokens — rhema run directories (each answered request and its usage), session
 * files of the formats `bench replay` imports (Claude Code, Codex, mini-swe-agent: each billed
 * request as sent), or samples files (.jsonl, src/tokens/calibration-samples.ts) — writes the
 * calibration file, and prints
 * the fit's error on the requests it was fitted on and on sessions held out (k-fold by session),
 * beside the error chars/4 makes on the same requests.
 *
 * The input side is `loadSamples`: one branch per kind of input (the place to add an importer's
 * `billedSamples`).
 */
import { stat } from "node:fs/promises";
import { basename, resolve } from "node:path";
import type { Argv } from "yargs";
import { RhemaError } from "../core/errors.js";
import { RunDir } from "../runner/run-dir/run-dir.js";
import { readRunDirBilledSamples } from "../runner/run-dir/recorded-sessions.js";
import { readRegularFile } from "../store/input-file.js";
import { CALIBRATION_VERSION, formatCalibration } from "../tokens/calibration-file.js";
import { evaluateFactors, fitCalibration, type CalibrationSample, type ErrorFigures } from "../tokens/calibration-fit.js";
import { SamplesFormatError, parseSamplesJsonl } from "../tokens/calibration-samples.js";
import { CONTENT_KINDS } from "../core/token-counter.js";
import { billedSamples } from "../transcript/import/billed-samples.js";
import picomatch from "picomatch";
import { loadReplayInputs } from "./replay-inputs.js";
import { EXIT_OK, type ExitCode } from "./exit-codes.js";
import { withExamples } from "./help-format.js";
import { print, type CliIo } from "./io.js";
import { checkOutputApart, probeOutputFile, writeOutputFile } from "./output-file.js";
import { guardOutput } from "../runner/run-dir/output-guard.js";

export function benchCalibrateOptions<T>(y: Argv<T>) {
  return withExamples(y, [
    ["$0 bench calibrate .rhema/runs/latest --out calibration.json", "fit the factors on a run against a real model"],
    ["$0 bench calibrate ~/.claude/projects/app --model 'claude-*' --out claude.json", "fit Claude's factors on Claude Code sessions and their bills"],
  ])
    .positional("inputs", { type: "string", array: true, demandOption: true, describe: "rhema run directories, session files or folders of them (Claude Code, Codex, mini-swe-agent; as bench replay reads them), or samples files (.jsonl: one {session, system, tools, messages, billed} a line)" })
    .option("out", { type: "string", demandOption: true, describe: "write the calibration file (JSON) here" })
    .option("model", { type: "string", array: true, default: [], describe: "fit only the requests of models matching this glob (repeatable; e.g. 'claude-*': one tokenizer's requests)" });
}

export interface BenchCalibrateArgs {
  inputs: string[];
  out: string;
  model?: string[] | undefined;
}

const CHARS4 = { perChar: { prose: 0.25, code: 0.25, json: 0.25, tool_result: 0.25 }, perMessage: 4, perToolBlock: 4 };

export async function benchCalibrateCommand(args: BenchCalibrateArgs, io: CliIo): Promise<ExitCode> {
  const out = resolve(io.cwd, args.out);
  await checkOutputApart("--out", out, args.inputs.map((p) => resolve(io.cwd, p)));
  await guardOutput(out, "write", () => probeOutputFile(out, io.pid));
  const samples: CalibrationSample[] = [];
  const models = args.model ?? [];
  const matches = models.length === 0 ? null : picomatch(models);
  let otherModels = 0;
  for (const input of args.inputs) {
    const loaded = await loadSamples(resolve(io.cwd, input));
    for (const sample of loaded.samples) {
      if (matches === null || (sample.model !== undefined && matches(sample.model))) samples.push(sample);
      else otherModels += 1;
    }
    for (const why of loaded.skipped) print(io.stderr, `skipped ${why}`);
  }
  if (otherModels > 0) print(io.stderr, `skipped ${otherModels} requests of models not matching ${models.join(", ")}`);
  let fit;
  try {
    fit = fitCalibration(samples);
  } catch (err) {
    throw new RhemaError("invalid_input", `${args.inputs.join(" ")}: ${(err as Error).message}`);
  }
  const requests = samples.length;
  const fittedFrom = `rhema bench calibrate on ${args.inputs.map((p) => basename(p)).join(", ")}: ${requests} requests of ${fit.sessions} sessions with two or more`;
  const text = formatCalibration({ version: CALIBRATION_VERSION, fittedFrom, factors: fit.factors, fit: { sessions: fit.sessions, fitted: fit.fitted, heldOut: fit.heldOut, unfitted: fit.unfitted } });
  await guardOutput(out, "write", () => writeOutputFile(out, text));
  const { perChar } = fit.factors;
  print(io.stdout, [
    `calibration: ${requests} requests of ${fit.sessions} sessions`,
    `factors, tokens per character: ${CONTENT_KINDS.map((k) => `${k} ${perChar[k].toFixed(4)} (${perChar[k] > 0 ? (1 / perChar[k]).toFixed(2) : "-"} chars/token)`).join(", ")}`,
    `framing: ${fit.factors.perMessage.toFixed(2)} per message, ${fit.factors.perToolBlock.toFixed(2)} per tool call or result${fit.unfitted.length ? `; too little to fit, kept at chars/4: ${fit.unfitted.join(", ")}` : ""}`,
    `fit error (requests fitted, each session's first left out): ${errorLine(fit.fitted)}`,
    `held-out error (${fit.heldOut ? `${fit.heldOut.folds}-fold by session` : "needs two sessions"}): ${fit.heldOut ? errorLine(fit.heldOut) : "-"}`,
    `chars/4 on the same requests: ${errorLine(evaluateFactors(samples, CHARS4))}`,
    `wrote ${out} (${JSON.parse(text).id})`,
  ].join("\n"));
  return EXIT_OK;
}

function errorLine(e: ErrorFigures): string {
  const sign = e.aggregateErrorPct >= 0 ? "+" : "";
  return `aggregate ${sign}${e.aggregateErrorPct.toFixed(1)} %, mean per request ${e.meanRequestErrorPct.toFixed(1)} % (${e.requests} requests)`;
}

/** One input's samples: a run directory's requests, or a samples file's lines. */
async function loadSamples(path: string): Promise<{ samples: CalibrationSample[]; skipped: string[] }> {
  const info = await stat(path).catch((err: NodeJS.ErrnoException) => {
    throw new RhemaError("invalid_input", `${path}: cannot read (${err.code ?? err.message})`);
  });
  if (info.isDirectory()) {
    const isRunDir = await stat(new RunDir(path).manifestPath).then(() => true, () => false);
    return isRunDir ? readRunDirBilledSamples(path) : importedSamples(path);
  }
  const text = await readRegularFile(path).then((b) => b.toString("utf8"), (err: NodeJS.ErrnoException) => {
    throw new RhemaError("invalid_input", `${path}: cannot read (${err.code ?? err.message})`);
  });
  if (!isSamplesFile(text)) return importedSamples(path);
  try {
    return { samples: parseSamplesJsonl(text, path), skipped: [] };
  } catch (err) {
    if (err instanceof SamplesFormatError) throw new RhemaError("invalid_input", err.message);
    throw err;
  }
}

/** A samples file's first line is a sample: an object with `messages` and `billed`. */
function isSamplesFile(text: string): boolean {
  const first = text.split("\n").find((l) => l.trim() !== "");
  if (first === undefined) return true;
  try {
    const value = JSON.parse(first) as unknown;
    return typeof value === "object" && value !== null && "messages" in value && "billed" in value;
  } catch {
    return false;
  }
}

/** The billed requests of the sessions `bench replay` reads from a session file or folder, each session apart. */
async function importedSamples(path: string): Promise<{ samples: CalibrationSample[]; skipped: string[] }> {
  const { read } = await loadReplayInputs([path], false, 0);
  const samples: CalibrationSample[] = [];
  const skipped: string[] = [];
  for (const input of read) {
    for (const session of input.sessions) {
      const billed = billedSamples(session);
      if (billed.length === 0) skipped.push(`${session.name}: no request carries a bill`);
      for (const b of billed) samples.push({ session: `${input.name}#${session.name}`, system: b.system, tools: b.tools, messages: b.messages, billed: b.billed, ...(b.model ? { model: b.model } : {}) });
    }
  }
  return { samples, skipped };
}
