/**
 * Simulated time. `Date`, `setTimeout`/`clearTimeout` and `setInterval`/`clearInterval` are faked for
 * the whole process while one seed runs (core, the memory store and the world all read them), and the
 * world advances the clock one timer at a time. `queueMicrotask`, promises and `setImmediate` stay
 * real: core relies on microtasks, and a real `setImmediate` is how the driver lets every promise chain
 * a timer started run to its end before the next timer fires. `performance` is not faked: core reads it
 * only to time store calls for a tracer, and nothing subscribes here.
 */
import { type Clock, withGlobal } from '@sinonjs/fake-timers';

/** Where simulated time starts: a fixed instant, so every timestamp in a trace replays. */
export const SIM_EPOCH = Date.UTC(2026, 0, 5, 9, 0, 0);

const realSetImmediate = globalThis.setImmediate;

/** Fakes the clock for one run; `uninstall()` it when the run ends. */
export function installClock(): Clock {
  return withGlobal(globalThis).install({
    now: SIM_EPOCH,
    toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'],
    loopLimit: 10_000_000,
  });
}

/**
 * Resolves once every microtask queued so far, and every one those queue in turn, has run: Node drains
 * the whole microtask queue before it reaches the check phase where a (real) immediate runs. Nothing in
 * the simulation does real I/O, so after this the world is still until the next timer fires.
 */
export function drainMicrotasks(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

/** `HH:MM:SS.mmm` since the start of the run (days added when a run goes past 24 h). */
export function formatSimTime(at: number): string {
  const ms = at - SIM_EPOCH;
  const days = Math.floor(ms / 86_400_000);
  const rest = new Date(ms - days * 86_400_000).toISOString().slice(11, 23);
  return days > 0 ? `${days}d+${rest}` : rest;
}
