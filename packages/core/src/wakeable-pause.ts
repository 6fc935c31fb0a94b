/**
 * A pause a worker's `close()` can cut short: `pause(ms)` resolves after `ms`, or as soon as `wake()`
 * is called, so a worker closing while its fetch loop waits out a polling interval (an empty queue, a
 * backend out of reach) stops at once. `wake()` with no pause running does nothing.
 *
 * @example
 * const { pause, wake } = wakeablePause();
 * while (!stopping) if ((await fetchJobs()).length === 0) await pause(pollingIntervalMs);
 * // close(): stopping = true; wake();
 */
export function wakeablePause(): { pause(ms: number): Promise<void>; wake(): void } {
  let waiting: (() => void) | undefined;
  return {
    pause: (ms) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          waiting = undefined;
          resolve();
        }
        waiting = done;
      }),
    wake: () => waiting?.(),
  };
}
