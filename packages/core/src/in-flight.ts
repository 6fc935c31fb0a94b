/** Returned by `watchHandlers` when the deadline passed before the handlers settled. */
export const DEADLINE: unique symbol = Symbol('hookline.deadline');
/** Returned by `watchHandlers` (with `endAtOverrun`) when the handlers ran past `maxRunMs`. */
export const OVERRUN: unique symbol = Symbol('hookline.overrun');

/** How handlers ended: `undefined` for success, otherwise what they threw. */
export type HandlerOutcome = { error: unknown } | undefined;

export interface WatchOptions {
  /** When `first` gives up with DEADLINE (Infinity: never, as in a worker). */
  deadlineMs: number;
  heartbeatMs: number;
  /** Renews the lease. */
  heartbeat: () => void;
  /** Past this the lease is no longer renewed, and `overrun` is called once. */
  maxRunMs: number;
  overrun: () => void;
  /**
   * `first` resolves with `OVERRUN` at `maxRunMs` (a queue worker: the job must fail and free its
   * slot, whatever the handler does). Otherwise only the deadline ends `first` early.
   */
  endAtOverrun?: boolean;
}

/**
 * Watches handlers that returned a promise. One timer per delivery renews the lease every
 * `heartbeatMs` (past the deadline too, so no other attempt takes over a live run) until `maxRunMs`,
 * when renewing stops for good: a handler that never finishes then no longer holds its delivery, and no
 * timer is kept for it. `first` resolves with `DEADLINE` when `deadlineMs` passes first (or `OVERRUN`
 * at `maxRunMs`, with `endAtOverrun`); `settled`
 * always resolves with the final outcome. Handlers that settle within a microtask never start the timer.
 */
export function watchHandlers(
  running: Promise<void>,
  options: WatchOptions,
): { first: Promise<HandlerOutcome | typeof DEADLINE | typeof OVERRUN>; settled: Promise<HandlerOutcome> } {
  const { deadlineMs, heartbeatMs, heartbeat, maxRunMs, overrun, endAtOverrun = false } = options;
  const startedAt = Date.now();
  const deadlineAt = startedAt + deadlineMs;
  const stopAt = startedAt + maxRunMs;
  let nextBeat = startedAt + heartbeatMs;
  let done = false;
  let pastDeadline = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let resolveFirst!: (value: HandlerOutcome | typeof DEADLINE | typeof OVERRUN) => void;
  const first = new Promise<HandlerOutcome | typeof DEADLINE | typeof OVERRUN>((resolve) => (resolveFirst = resolve));

  const schedule = () => {
    const dueAt = Math.min(nextBeat, stopAt, pastDeadline ? Number.POSITIVE_INFINITY : deadlineAt);
    timer = setTimeout(tick, Math.max(0, dueAt - Date.now()));
  };
  const tick = () => {
    if (done) return;
    const now = Date.now();
    if (!pastDeadline && now >= deadlineAt) {
      pastDeadline = true;
      resolveFirst(DEADLINE);
    }
    if (now >= stopAt) {
      overrun();
      if (endAtOverrun) resolveFirst(OVERRUN); // no effect once DEADLINE was given
      return; // no more beats, no more timers: the leases lapse
    }
    if (now >= nextBeat) {
      nextBeat = now + heartbeatMs;
      heartbeat();
    }
    schedule();
  };

  const settled = running.then(
    (): HandlerOutcome => undefined,
    (error: unknown): HandlerOutcome => ({ error: error ?? new Error('a handler rejected with no reason') }),
  );
  settled.then((outcome) => {
    done = true;
    clearTimeout(timer);
    resolveFirst(outcome); // no effect once DEADLINE was given
  });
  queueMicrotask(() => {
    if (!done) schedule();
  });
  return { first, settled };
}
