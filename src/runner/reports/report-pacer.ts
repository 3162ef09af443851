/**
 * Paces the reports a run writes while it goes on. Each trial's end asks for them, but writing
 * them renders every result so far (JUnit, stats, summary: ~100 ms over 200 results here), so one
 * write per end would keep a core busy on a large suite and slow the trials starting beside it.
 * The pacer writes behind the trials instead and spaces the writes so that writing takes at most
 * `1 / (1 + spacing)` of the time (a tenth by default): after a write of d ms the next starts no
 * sooner than `spacing × d` ms later. A write renders on the main thread, so every trial's next
 * step that falls due meanwhile waits for it: at a quarter of the time (spacing 3), most trials
 * starting beside a write had their prepare held up by one. Asks that come in between are one
 * write, of the latest results (it reads them when it starts). A small run's writes take a few
 * ms: they follow each end almost at once.
 *
 * A failed write is not lost: the next `ask` throws it (the trial ending then stops the run, as a
 * failed write always has), and so does `settle`, which the run's last write awaits first.
 */
export class ReportPacer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** Asked for while a write ran: another one follows it. */
  private again = false;
  private failure: { error: unknown } | null = null;
  private nextAt = 0;

  constructor(
    private readonly write: () => Promise<unknown>,
    private readonly spacing = 9,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Asks for a write soon; throws an earlier write's failure. */
  ask(): void {
    this.throwFailure();
    if (this.running !== null) {
      this.again = true;
      return;
    }
    if (this.timer !== null) return;
    const wait = Math.max(0, this.nextAt - this.now());
    if (wait === 0) this.start();
    else this.timer = setTimeout(() => this.start(), wait);
  }

  /** No further write is started; waits for the one under way, then throws any failure. */
  async settle(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.again = false;
    await this.running;
    this.throwFailure();
  }

  private start(): void {
    this.timer = null;
    const began = this.now();
    this.running = this.write().then(
      () => {},
      (error: unknown) => {
        this.failure ??= { error };
      },
    ).finally(() => {
      const ended = this.now();
      this.nextAt = ended + this.spacing * (ended - began);
      this.running = null;
      if (this.again && this.failure === null) {
        this.again = false;
        this.ask();
      }
    });
  }

  private throwFailure(): void {
    if (this.failure !== null) throw this.failure.error;
  }
}
