/**
 * The calibrations that ship with rhema, for models without a public tokenizer.
 *
 * PLACEHOLDER — not fitted by `rhema bench calibrate`. The Anthropic factors below are chars/4
 * scaled by the per-kind ratios issue #23 measured from outside on 899 requests of real Claude
 * Code sessions (billed prompt tokens ÷ the chars/4 estimate: prose ~1.04×, tool calls ~1.41×,
 * tool results ~1.34×, code and line-numbered reads ~2.53 characters a token), with the chars/4
 * estimate's framing. They are to be replaced by a fit on real public session logs (task B2's
 * importers, then `rhema bench calibrate`) at integration; `fittedFrom` says so in every record.
 */
import type { CalibrationFile } from "./calibration-file.js";
import { calibrationId } from "./calibration-file.js";
import type { CalibrationFactors } from "../core/token-counter.js";

const ANTHROPIC_FACTORS: CalibrationFactors = {
  perChar: { prose: 0.26, code: 0.395, json: 0.3525, tool_result: 0.335 },
  perMessage: 4,
  perToolBlock: 4,
};

export const ANTHROPIC_PLACEHOLDER_CALIBRATION: CalibrationFile = {
  version: 1,
  id: calibrationId(ANTHROPIC_FACTORS),
  fittedFrom: "PLACEHOLDER, not a fit: chars/4 scaled by the per-kind ratios issue #23 measured on 899 real Claude Code requests (prose 1.04x, tool calls 1.41x, tool results 1.34x, code 2.53 chars/token); to be refitted with `rhema bench calibrate` on real public logs",
  factors: ANTHROPIC_FACTORS,
  fit: null,
};
