/** The one error the cache simulator throws: a request the real API would refuse, or bad input. */
import { RhemaError } from "../core/errors.js";

export class CacheRequestError extends RhemaError {
  constructor(message: string) {
    super("invalid_input", `prompt-cache simulator: ${message}`);
  }
}
