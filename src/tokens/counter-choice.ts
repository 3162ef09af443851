/**
 * Which token counter a model counts with: its provider's published tokenizer where there is
 * one (OpenAI: o200k_base or cl100k_base by model name), the shipped calibration for models
 * without one (Anthropic), chars/4 otherwise (scripted runs, a compatible server's models). A
 * calibration file given by the user (`--calibration`) replaces the choice for every model.
 */
import { chars4Counter, type TokenCounter, type TokenCounterRecord, type TokenizerEncoding } from "../core/token-counter.js";
import { counterOfCalibration, type CalibrationFile } from "./calibration-file.js";
import { ANTHROPIC_CALIBRATION } from "./default-calibrations.js";
import { loadTokenizerCounter } from "./tokenizer-counter.js";

/** How a provider's models are counted (the provider registry says it per provider). */
export type TokenCounting = "tokenizer" | "calibration" | "chars4";

/** OpenAI's encoding for `model`, or null for a name it does not know (a compatible server's model). */
export function encodingForModel(model: string): TokenizerEncoding | null {
  const name = model.toLowerCase().replace(/^openai\//, "");
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o|codex|gpt-oss)/.test(name)) return "o200k_base";
  if (/^(gpt-4|gpt-3\.5)/.test(name)) return "cl100k_base";
  return null;
}

/** The counter for a model counted `counting` (a `calibration` given replaces it). */
export async function chooseCounter(counting: TokenCounting, model: string | null, calibration?: CalibrationFile): Promise<TokenCounter> {
  if (calibration) return counterOfCalibration(calibration);
  switch (counting) {
    case "tokenizer": {
      const encoding = model === null ? null : encodingForModel(model);
      return encoding === null ? chars4Counter : loadTokenizerCounter(encoding);
    }
    case "calibration":
      return counterOfCalibration(ANTHROPIC_CALIBRATION);
    case "chars4":
      return chars4Counter;
  }
}

/** The counter a session recorded, loading a tokenizer when it names one. */
export async function loadRecordedCounter(record: TokenCounterRecord): Promise<TokenCounter> {
  switch (record.kind) {
    case "chars4":
      return chars4Counter;
    case "tokenizer":
      return loadTokenizerCounter(record.encoding);
    case "calibrated":
      return counterOfCalibration({ version: 1, fittedFrom: "recorded", factors: record.factors, fit: null });
  }
}
