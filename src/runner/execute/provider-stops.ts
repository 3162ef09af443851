/**
 * The providers that refused this run (a dead or revoked key, a spent quota: a
 * `ProviderRefusedError`, providers/provider-refusal.ts), and what each refusal stops. The first
 * refusal of a provider aborts that provider's signal: its running trials checkpoint and stop as
 * on an interrupt, its trials not yet started do not start, and none of them is recorded errored —
 * each is left unfinished, so the same command continues it once the key or the quota is fixed
 * (no `--retry-errored`). Other providers' trials (another matrix cell's) go on. The run says it
 * once: its reports carry the refusals (one summary block; JUnit's skipped entries name the
 * provider) and the edge one line and exit 3 (reports/refusal-text.ts).
 *
 * A provider is its registry name (`anthropic`, `openai`): the run reads one key per provider, so a
 * refused key refuses every model of it.
 */
import { findCause, ProviderRefusedError, type ProviderRefusal } from "../../core/errors.js";

export class ProviderStops {
  private readonly controllers = new Map<string, AbortController>();
  private readonly refusals = new Map<string, ProviderRefusal>();

  /** Aborted once `provider` refuses the run. */
  signalFor(provider: string): AbortSignal {
    return this.controllerOf(provider).signal;
  }

  /** Records `refusal` and stops its provider; false when the provider had refused already (said once). */
  stop(refusal: ProviderRefusal): boolean {
    if (this.refusals.has(refusal.provider)) return false;
    this.refusals.set(refusal.provider, refusal);
    this.controllerOf(refusal.provider).abort(new ProviderRefusedError(refusal));
    return true;
  }

  /** The first refusal among `providers`, or null when none of them refused. */
  refusalAmong(providers: readonly string[]): ProviderRefusal | null {
    for (const provider of providers) {
      const refusal = this.refusals.get(provider);
      if (refusal) return refusal;
    }
    return null;
  }

  /** Every refusal, in the order they came. */
  all(): ProviderRefusal[] {
    return [...this.refusals.values()];
  }

  private controllerOf(provider: string): AbortController {
    let controller = this.controllers.get(provider);
    if (!controller) {
      controller = new AbortController();
      this.controllers.set(provider, controller);
    }
    return controller;
  }
}

/** The refusal a throw carries (anywhere in its cause chain), or null. */
export function refusalOf(err: unknown): ProviderRefusal | null {
  return findCause(err, (e): e is ProviderRefusedError => e instanceof ProviderRefusedError)?.refusal ?? null;
}
