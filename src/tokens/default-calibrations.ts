/**
 * The calibrations that ship with rhema, for models without a public tokenizer.
 *
 * Anthropic: fitted by `rhema bench calibrate bench/corpus/real/claude-code --model 'claude-*'`
 * on the real Claude Code sessions checked into the repository (MIT-licensed public logs,
 * bench/corpus/real/README.md; claude-sonnet-4 and claude-sonnet-4-6, each request's billed
 * prompt tokens). A test fits them again from those files and compares. `prose` and the
 * per-message framing land on their bounds and `code` is not fitted (too little of them varies
 * apart in those logs): those counts are the least certain.
 */
import type { CalibrationFile } from "./calibration-file.js";
import { calibrationId } from "./calibration-file.js";
import type { CalibrationFactors } from "../core/token-counter.js";

const ANTHROPIC_FACTORS: CalibrationFactors = {
  perChar: { prose: 0.2, code: 0.25, json: 0.282868, tool_result: 0.370391 },
  perMessage: 40,
  perToolBlock: 16.9956,
};

export const ANTHROPIC_CALIBRATION: CalibrationFile = {
  version: 1,
  id: calibrationId(ANTHROPIC_FACTORS),
  fittedFrom: "rhema bench calibrate bench/corpus/real/claude-code --model 'claude-*': 126 requests of 10 sessions (Claude Code 1.0.98–2.1.201; claude-sonnet-4, claude-sonnet-4-6)",
  factors: ANTHROPIC_FACTORS,
  fit: {
    sessions: 10,
    fitted: { requests: 116, aggregateErrorPct: 0.2734055656928898, meanRequestErrorPct: 1.8703867716890927 },
    heldOut: { requests: 116, aggregateErrorPct: -0.689837762498376, meanRequestErrorPct: 5.691271915463481, folds: 5 },
    unfitted: ["code"],
  },
};
