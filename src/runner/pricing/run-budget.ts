/**
 * Budgets: each task's own (`limits.maxCostUsd`, `limits.maxTokens`), a matrix cell's (an `include`
 * entry's `budget:`, across every trial of that cell) and the run's (`--max-cost`, `--max-tokens`,
 * across every task of the run). Spend is read off TranscriptStats, which count the compaction
 * worker's requests and, carried in the checkpoint, every earlier run of a task. A cell's and the
 * run's spend are the sums of their trials' latest stats — from results and checkpoints when the
 * run starts, then from each running trial as its requests land — so a resumed trial's earlier
 * spend counts once. Decisions are pure functions; `RunBudget` only keeps the latest figures.
 */
import type { SpentBudget } from "../../core/errors.js";
import { formatUsd } from "../../core/errors.js";
import { spentTokens, totalCostUsd, type TranscriptStats } from "../../core/transcript-types.js";
import type { RunDir } from "../run-dir/run-dir.js";
import type { ResultBudget } from "../run-dir/task-result.js";
import type { TrialKey } from "../trials/trial-key.js";
import { trialId } from "../trials/trial.js";
import type { PricedModel } from "./task-pricing.js";
import { countedStats } from "./cost-figures.js";

/** A set of budgets; an absent one is no limit. */
export interface Budgets {
  maxCostUsd?: number;
  maxTokens?: number;
}

export interface Spend {
  /** Dollars of the priced requests (an unpriced request adds nothing: a cost budget needs a priced model). */
  costUsd: number;
  /** Input + cache reads + cache writes + output, the worker's included. */
  tokens: number;
}

const NOTHING: Spend = { costUsd: 0, tokens: 0 };

function spendOf(stats: TranscriptStats | null): Spend {
  return stats === null ? NOTHING : { costUsd: totalCostUsd(stats) ?? 0, tokens: spentTokens(stats) };
}

/** The first of `budgets` that `spend` has reached (cost before tokens), or null. */
export function spentBudget(scope: SpentBudget["scope"], budgets: Budgets, spend: Spend): SpentBudget | null {
  if (budgets.maxCostUsd !== undefined && spend.costUsd >= budgets.maxCostUsd) {
    return { scope, measure: "cost", limit: budgets.maxCostUsd, spent: spend.costUsd };
  }
  if (budgets.maxTokens !== undefined && spend.tokens >= budgets.maxTokens) {
    return { scope, measure: "tokens", limit: budgets.maxTokens, spent: spend.tokens };
  }
  return null;
}

/**
 * Whether a task stopped on `stoppedOn` may continue under the budgets in force now: the limit
 * it stopped on was removed, or raised above what had been spent when it stopped.
 */
export function budgetRaised(stoppedOn: ResultBudget, budgets: { task: Budgets; cell: Budgets; run: Budgets }): boolean {
  const now = budgets[stoppedOn.scope][stoppedOn.measure === "cost" ? "maxCostUsd" : "maxTokens"];
  return now === undefined || now > stoppedOn.spent;
}

function hasBudget(budgets: Budgets): boolean {
  return budgets.maxCostUsd !== undefined || budgets.maxTokens !== undefined;
}

/** The run's spend, trial by trial, and the checks each trial's agent asks before its requests. */
export class RunBudget {
  private readonly spends = new Map<string, { variant: string | null; spend: Spend }>();

  /** `limits`: the run's; `cells`: each matrix cell's by variant id (a cell absent: no budget). */
  constructor(readonly limits: Budgets, private readonly cells: ReadonlyMap<string, Budgets> = new Map()) {}

  /** Whether any budget here needs the spend of earlier runs (`seed`). */
  get limited(): boolean {
    return hasBudget(this.limits) || [...this.cells.values()].some(hasBudget);
  }

  /** A trial's stats as they stand now (they include its earlier runs: the latest replaces what was known). */
  record(trial: TrialKey, stats: TranscriptStats | null): void {
    this.spends.set(trialId(trial), { variant: trial.variant, spend: spendOf(stats) });
  }

  /** What the run's trials spent, or (`variant` given) the trials of that matrix cell. */
  total(variant?: string): Spend {
    let costUsd = 0;
    let tokens = 0;
    for (const entry of this.spends.values()) {
      if (variant !== undefined && entry.variant !== variant) continue;
      costUsd += entry.spend.costUsd;
      tokens += entry.spend.tokens;
    }
    return { costUsd, tokens };
  }

  /** The run's budget that is spent, or null (also null when the run sets none). */
  spent(): SpentBudget | null {
    if (!hasBudget(this.limits)) return null;
    return spentBudget("run", this.limits, this.total());
  }

  /** The budget spent that keeps `trial` from its next request, beyond its task's own: its cell's, then the run's; or null. */
  spentFor(trial: TrialKey): SpentBudget | null {
    const cell = trial.variant === null ? undefined : this.cells.get(trial.variant);
    const spentCell = cell === undefined || !hasBudget(cell) ? null : spentBudget("cell", cell, this.total(trial.variant!));
    return spentCell ?? this.spent();
  }

  /** The engine's budget check for one trial: its task's limits (each trial has them whole) first, then its cell's, then the run's (recording its stats on the way). */
  checkFor(trial: TrialKey, limits: Budgets): (who: "task" | "worker", stats: TranscriptStats | null) => SpentBudget | null {
    return (_who, stats) => {
      this.record(trial, stats);
      return spentBudget("task", limits, spendOf(stats)) ?? this.spentFor(trial);
    };
  }

  /** Seeds the spend of every trial of the run from its result, else its checkpoint (a run's or a cell's budget spans them). */
  async seed(runDir: RunDir, trials: readonly TrialKey[]): Promise<void> {
    for (const trial of trials) {
      const folder = runDir.trial(trial);
      // A result that cannot be read stops the run when its task comes up; its spend is unknown until then.
      const result = await folder.readResult().catch(() => null);
      if (result) {
        this.record(trial, result.stats && countedStats(result.stats));
        continue;
      }
      if ((await folder.readState()) === null) continue;
      const checkpoint = folder.openCheckpoint();
      try {
        this.record(trial, (await checkpoint.load())?.transcript?.stats ?? null);
      } finally {
        await checkpoint.close();
      }
    }
  }
}

/** What a cost budget needs of a task's pricing, and how its model reads in the error. */
export interface CostBudgetSubject {
  file: string;
  key: string;
  /** The task's cost budget, if it has one. */
  maxCostUsd?: number;
  /** With a matrix: the task's cell, and its cost budget if it has one. */
  cell?: { variant: string; maxCostUsd?: number };
  /** How the task's model reads: `anthropic/claude-x`, `scripted`. */
  model: string;
  /** The task names a scripted model without `priceAs`. */
  scriptedWithoutPriceAs: boolean;
  pricing: { task: PricedModel | null; worker: PricedModel | null };
  /** `transcript.worker`, as `provider/name`, when the task names one. */
  worker?: string;
}

/**
 * Why a cost budget (the task's, its matrix cell's, or the run's `--max-cost`) cannot be enforced on a task — its
 * model, or the compaction worker it names, is unpriced — or null. Checked before any task starts.
 */
export function unenforceableCostBudget(subject: CostBudgetSubject, runMaxCostUsd: number | undefined): string | null {
  const cellCost = subject.cell?.maxCostUsd;
  const what = subject.maxCostUsd !== undefined ? `${subject.file}: cannot enforce limits.maxCostUsd ${formatUsd(subject.maxCostUsd)}`
    : cellCost !== undefined ? `cannot enforce the budget.maxCostUsd ${formatUsd(cellCost)} of matrix cell ${subject.cell!.variant} (task ${subject.key}, ${subject.file})`
    : runMaxCostUsd !== undefined ? `cannot enforce --max-cost ${formatUsd(runMaxCostUsd)} (task ${subject.key}, ${subject.file})`
    : null;
  if (what === null) return null;
  if (subject.pricing.task === null) {
    const hint = subject.scriptedWithoutPriceAs ? " (a scripted model is priced only as its model.priceAs)" : "";
    return `${what} on unpriced model ${subject.model}${hint}: add it to a pricing file`;
  }
  if (subject.worker !== undefined && subject.pricing.worker === null) {
    return `${what} on unpriced model ${subject.worker} (the task's transcript.worker): add it to a pricing file`;
  }
  return null;
}
