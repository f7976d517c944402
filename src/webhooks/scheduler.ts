// When the dispatcher looks (docs/webhooks.md §5.4): its timers, the lanes in flight, and the
// wake / poll / stop rules, as explicit state. What a look does is the caller's `cycle`; this
// module knows nothing of the database or of HTTP.
//
// - A wake (something was written, a lane ended, a retry came due) runs a cycle at once; a wake
//   during a cycle makes that cycle go round again. A wake asks for a full look (`full`), a
//   poll for an idle one.
// - Cycles start at least `minGapMs` apart: a wake sooner than that after the last cycle's start
//   waits out the rest of the gap, and every wake meanwhile is answered by that one cycle. A
//   busy API wakes the dispatcher at every commit; one look per gap fans out and claims what
//   all of them wrote, at the cost of one look (docs/webhooks.md §5.4).
// - After each cycle the next poll is `pollMs` away.
// - A retry due before the next poll gets one timer for the earliest such retry.
// - A lane runs next to the cycles: its endpoint counts as in flight until it ends, then the
//   scheduler wakes (the endpoint's next delivery may be due).
// - stop(): no more cycles or timers; resolves once the cycle and every lane have ended.

export interface SchedulerOptions {
  /** Idle poll period. */
  pollMs: number;
  /** Least time between the starts of two cycles (0: a wake always runs at once). */
  minGapMs?: number;
  /** One look: `full` after a wake, not after a poll. */
  cycle(full: boolean): Promise<void>;
  /** A cycle threw (the next wake or poll tries again). */
  onCycleError(err: unknown): void;
}

export class DispatchScheduler {
  /** Endpoints with a lane in flight: they are not claimed again until it ends. */
  readonly inFlight = new Set<string>();
  private readonly lanes = new Set<Promise<void>>();
  private stopped = false;
  /** The next poll. */
  private timer: NodeJS.Timeout | undefined;
  /** A wake waiting out the gap after the last cycle's start. */
  private gapTimer: NodeJS.Timeout | undefined;
  /** When the last cycle started (performance.now()). */
  private lastStart = -Infinity;
  /** The earliest retry due before the next poll. */
  private retryTimer: { at: number; timer: NodeJS.Timeout } | undefined;
  /** The cycle under way. */
  private current: Promise<void> | undefined;
  /** Woken during the cycle: go round again. */
  private again = false;
  /** A wake rather than a poll is pending: the next look is a full one. */
  private forced = true;

  constructor(private readonly opts: SchedulerOptions) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Lanes in flight. */
  get running(): number {
    return this.lanes.size;
  }

  /** Something was written: look now instead of at the next poll. */
  readonly wake = (): void => {
    if (this.stopped) return;
    this.forced = true;
    if (this.current) {
      this.again = true;
      return;
    }
    this.run();
  };

  /** Runs a cycle now, or once the gap after the last one's start has passed. */
  private run(): void {
    if (this.gapTimer) return; // already waiting: that cycle answers this wake too
    const wait = this.lastStart + (this.opts.minGapMs ?? 0) - performance.now();
    if (wait <= 0) return this.start();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.gapTimer = setTimeout(() => {
      this.gapTimer = undefined;
      if (!this.stopped && !this.current) this.start();
    }, Math.ceil(wait));
  }

  /** Wake in `ms` (a retry due before the next poll); only the earliest such wake is kept. */
  wakeIn(ms: number): void {
    const at = Date.now() + ms;
    if (this.stopped || (this.retryTimer && this.retryTimer.at <= at)) return;
    if (this.retryTimer) clearTimeout(this.retryTimer.timer);
    this.retryTimer = {
      at,
      timer: setTimeout(() => {
        this.retryTimer = undefined;
        this.wake();
      }, ms + 1),
    };
  }

  /** Runs `work` as the lane of `endpointId`: in flight until it settles, then a wake. */
  startLane(endpointId: string, work: Promise<void>): void {
    this.inFlight.add(endpointId);
    const p: Promise<void> = work.finally(() => {
      this.inFlight.delete(endpointId);
      this.lanes.delete(p);
      this.wake();
    });
    this.lanes.add(p);
  }

  /** No more cycles; resolves when the cycle under way and every lane have ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.gapTimer) clearTimeout(this.gapTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer.timer);
    await this.current;
    await Promise.allSettled([...this.lanes]);
  }

  /** One cycle now; woken meanwhile, the next follows (after the gap), else the next poll. */
  private start(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.again = false;
    const full = this.forced;
    this.forced = false;
    this.lastStart = performance.now();
    this.current = this.opts
      .cycle(full)
      .catch((err: unknown) => this.opts.onCycleError(err))
      .finally(() => {
        this.current = undefined;
        if (this.stopped) return;
        if (this.again) this.run();
        else this.timer = setTimeout(this.poll, this.opts.pollMs);
      });
  }

  private readonly poll = (): void => {
    if (this.stopped || this.current) return;
    this.run();
  };
}
