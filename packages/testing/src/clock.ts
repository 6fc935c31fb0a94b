/** A scheduled callback's handle. */
export type TimerHandle = { readonly id: number } | ReturnType<typeof setTimeout>;

/**
 * The time source the service simulator schedules retries on. A callback may return a promise: the
 * manual clock waits for it (the attempt it started) before moving on.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `callback` once, `ms` from now. */
  setTimeout(callback: () => unknown, ms: number): TimerHandle;
  /** Cancels a callback that has not run. */
  clearTimeout(handle: TimerHandle): void;
  /**
   * Optional: told about work started outside a timer (a first attempt, a replay), so a manual clock
   * can wait for it before moving time on.
   */
  track?(work: Promise<unknown>): void;
}

/** The real clock: `Date.now` and unref'd timers that do not hold the process open on their own. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, ms) {
    // A promise still pending keeps the process alive through `send()`'s caller; the timer need not.
    return setTimeout(() => void callback(), Math.max(0, ms));
  },
  clearTimeout(handle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

/** A clock that moves only when told to, so a test walks a 31-hour schedule in milliseconds. */
export interface ManualClock extends Clock {
  /**
   * Moves time forward by `ms`, running every callback that falls due on the way in time order and
   * waiting for the work each one starts (a delivery attempt over real HTTP) before going on.
   */
  advance(ms: number): Promise<void>;
  /** Runs callbacks one due time after another until none is left (or `maxSteps` were run). */
  runAll(maxSteps?: number): Promise<void>;
  /** Moves to the next due time and runs what is due there; false when nothing is scheduled. */
  runNext(): Promise<boolean>;
  /** Number of callbacks scheduled and not yet run. */
  readonly pending: number;
  /** Work started outside a timer that `advance`, `runNext` and `runAll` wait for first. */
  track(work: Promise<unknown>): void;
}

interface Timer {
  id: number;
  due: number;
  callback: () => unknown;
}

/**
 * Creates a manual clock starting at `start` (default: the real time now).
 *
 * @example
 * const clock = createManualClock();
 * const simulator = createServiceSimulator({ url, secret, clock });
 * const result = simulator.send(createDelivery('message.delivered'));
 * await clock.runAll(); // every retry of the schedule, in milliseconds of real time
 * expect((await result).attempts).toHaveLength(7);
 */
export function createManualClock(start: number = Date.now()): ManualClock {
  let now = start;
  let nextId = 1;
  let timers: Timer[] = [];
  const inFlight = new Set<Promise<unknown>>();

  async function settle(): Promise<void> {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  }

  async function runDue(until: number): Promise<boolean> {
    await settle();
    if (timers.length === 0) return false;
    const due = Math.min(...timers.map((timer) => timer.due));
    if (due > until) return false;
    now = Math.max(now, due);
    // Everything due at the same instant runs together, as real timers would fire back to back.
    const batch = timers.filter((timer) => timer.due === due);
    timers = timers.filter((timer) => timer.due !== due);
    await Promise.allSettled(batch.map(async (timer) => timer.callback()));
    await settle();
    return true;
  }

  return {
    now: () => now,
    setTimeout(callback, ms) {
      const timer = { id: nextId++, due: now + Math.max(0, ms), callback };
      timers.push(timer);
      return { id: timer.id };
    },
    clearTimeout(handle) {
      const id = (handle as { id?: unknown }).id;
      timers = timers.filter((timer) => timer.id !== id);
    },
    track(work) {
      const tracked: Promise<unknown> = work.then(
        () => inFlight.delete(tracked),
        () => inFlight.delete(tracked),
      );
      inFlight.add(tracked);
    },
    async advance(ms) {
      const target = now + ms;
      while (await runDue(target)) {
        // keep going: a callback may have scheduled another one inside the window
      }
      now = Math.max(now, target);
    },
    async runAll(maxSteps = 10_000) {
      for (let step = 0; step < maxSteps; step++) {
        if (!(await runDue(Number.POSITIVE_INFINITY))) return;
      }
      throw new Error(`createManualClock: runAll stopped after ${maxSteps} steps; something reschedules forever`);
    },
    runNext: () => runDue(Number.POSITIVE_INFINITY),
    get pending() {
      return timers.length;
    },
  };
}
