/**
 * `rhema bench calibrate`: fits a calibrated token counter's factors from requests with their
 * billed prompt tokens — rhema run directories (each answered request and its usage) or samples
 * files (.jsonl, src/tokens/calibration-samples.ts) — writes the calibration file, and prints
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
import { EXIT_OK, type ExitCode } from "./exit-codes.js";
import { withExamples } from "./help-format.js";
import { print, type CliIo } from "./io.js";
import { writeOutputFile } from "./output-file.js";

export function benchCalibrateOptions<T>(y: Argv<T>) {
  return withExamples(y, [
    ["$0 bench calibrate .rhema/runs/latest --out calibration.json", "fit the factors on a run against a real model"],
    ["$0 bench replay bench/corpus/scripted --calibration calibration.json", "replay with the fitted counts"],
  ])
    .positional("inputs", { type: "string", array: true, demandOption: true, describe: "rhema run directories, or samples files (.jsonl: one {session, system, tools, messages, billed} a line)" })
    .option("out", { type: "string", demandOption: true, describe: "write the calibration file (JSON) here" });
}

export interface BenchCalibrateArgs {
  inputs: string[];
  out: string;
}

const CHARS4 = { perChar: { prose: 0.25, code: 0.25, json: 0.25, tool_result: 0.25 }, perMessage: 4, perToolBlock: 4 };

export async function benchCalibrateCommand(args: BenchCalibrateArgs, io: CliIo): Promise<ExitCode> {
  const samples: CalibrationSample[] = [];
  for (const input of args.inputs) {
    const loaded = await loadSamples(resolve(io.cwd, input));
    samples.push(...loaded.samples);
    for (const why of loaded.skipped) print(io.stderr, `skipped ${why}`);
  }
  let fit;
  try {
    fit = fitCalibration(samples);
  } catch (err) {
    throw new RhemaError("invalid_input", `${args.inputs.join(" ")}: ${(err as Error).message}`);
  }
  const requests = samples.length;
  const fittedFrom = `rhema bench calibrate on ${args.inputs.map((p) => basename(p)).join(", ")}: ${requests} requests of ${fit.sessions} sessions with two or more`;
  const text = formatCalibration({ version: CALIBRATION_VERSION, fittedFrom, factors: fit.factors, fit: { sessions: fit.sessions, fitted: fit.fitted, heldOut: fit.heldOut, unfitted: fit.unfitted } });
  const out = resolve(io.cwd, args.out);
  await writeOutputFile(out, text);
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
    if (!isRunDir) throw new RhemaError("invalid_input", `${path}: not a run directory (no manifest.json) nor a samples file`);
    return readRunDirBilledSamples(path);
  }
  const text = await readRegularFile(path).then((b) => b.toString("utf8"), (err: NodeJS.ErrnoException) => {
    throw new RhemaError("invalid_input", `${path}: cannot read (${err.code ?? err.message})`);
  });
  try {
    return { samples: parseSamplesJsonl(text, path), skipped: [] };
  } catch (err) {
    if (err instanceof SamplesFormatError) throw new RhemaError("invalid_input", err.message);
    throw err;
  }
}
