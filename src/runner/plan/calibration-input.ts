/**
 * Reads a calibration file named on the command line (`--calibration FILE`, for `run`,
 * `validate` and `bench replay`): exit 2 naming the file and the field when it cannot be read
 * or is not a calibration.
 */
import { RhemaError } from "../../core/errors.js";
import { readRegularFile } from "../../store/input-file.js";
import { CalibrationFileError, parseCalibration, type CalibrationFile } from "../../tokens/calibration-file.js";

export async function loadCalibrationFile(path: string): Promise<CalibrationFile> {
  const text = await readRegularFile(path).then((b) => b.toString("utf8"), (err: NodeJS.ErrnoException) => {
    throw new RhemaError("invalid_input", `--calibration ${path}: cannot read (${err.code ?? err.message})`);
  });
  try {
    return parseCalibration(text, path);
  } catch (err) {
    if (err instanceof CalibrationFileError) throw new RhemaError("invalid_input", `--calibration ${err.message}`);
    throw err;
  }
}
