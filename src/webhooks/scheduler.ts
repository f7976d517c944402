// When the dispatcher looks (docs/webhooks.md §5.4): its timers, the lanes in flight, and the
// wake / poll / stop rules, as explicit state. What a look does is the caller's `cycle`; this
// module knows nothing of the database or of HTTP.
//
// - A wake (something was written, a lane ended, a retry came due) runs a cycle at once; a wake
//   during a cycle makes that cycle go round again. A wake asks for a full look (`full`), a
//   poll for an idle one.
// - After each cycle the next poll is `pollMs` away.
// - A retry due before the next poll gets one timer for the earliest such retry.
// - A lane runs next to the cycles: its endpoint counts as in flight until it ends, then the
//   scheduler wakes (the endpoint's next delivery may be due).
// - stop(): no more cycles or timers; resolves once the cycle and every lane have ended.

export interface SchedulerOptions {
  /** Idle poll period. */
  pollMs: number;
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
    if (this.retryTimer) clearTimeout(this.retryTimer.timer);
    await this.current;
    await Promise.allSettled([...this.lanes]);
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      const full = this.forced;
      this.forced = false;
      await this.opts.cycle(full);
    } while (this.again && !this.stopped);
  }

  private run(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.current = this.loop()
      .catch((err: unknown) => this.opts.onCycleError(err))
      .finally(() => {
        this.current = undefined;
        if (!this.stopped) this.timer = setTimeout(this.poll, this.opts.pollMs);
      });
  }

  private readonly poll = (): void => {
    if (this.stopped || this.current) return;
    this.run();
  };
}
