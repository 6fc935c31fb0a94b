// The Lambda invocation's time, as `sqsHandler` keeps it. A function that runs past its timeout fails
// the whole batch (Lambda deletes none of it, and every record comes back), so once less than the
// margin is left:
//
// - every job still running is handed back: settled as a wait of one `leaseMs`, no try spent, so its
//   copy runs once the handler's lease has lapsed (the handler goes on until Lambda freezes the
//   execution environment, and its lease stops being renewed then);
// - no record starts any more: each one not started yet is handed back as a wait of no time.
//
// A frozen execution environment may be thawed for a later invocation, and a handler handed back
// then resumes where it was, after its lease lapsed: its copy may be running elsewhere, beside it.
// The thaw cannot be prevented; `thawWatch` notices it (a gap in time longer than `leaseMs` while
// such handlers run), reports it, and aborts their jobs' fences: each handler's `context.signal` is
// aborted with a LeaseLostError, so a handler that checks it stops before it writes over its copy.
import type { JobResult, QueueJob } from '@hookline/core/adapter';

/**
 * A bound on how long before the invocation began SQS received its records: the event source mapping
 * gathers a batch for up to its batching window (at most 5 minutes) before it invokes the function.
 * A message may be hidden up to 12 hours from its receive; hides are counted from here.
 */
export const RECEIVED_BEFORE_INVOCATION_MS = 3_600_000;

export interface InvocationTime {
  /** Whether the hand-back happened: no record may start. */
  readonly over: () => boolean;
  /** `process` as this invocation runs it: handed back at the margin, or at once once past it. */
  readonly process: (job: QueueJob) => Promise<JobResult>;
  /** Stops the hand-back timer (the batch is settled). */
  readonly end: () => void;
}

export function invocationTime(
  remainingMs: number | undefined,
  marginMs: number,
  leaseMs: number,
  process: (job: QueueJob) => Promise<JobResult>,
  handedBack: (work: Promise<unknown>, job: QueueJob, fence: AbortController) => void,
): InvocationTime {
  let over = false;
  const running = new Map<(result: JobResult) => void, { work: Promise<unknown>; job: QueueJob; fence: AbortController }>();
  const handBack: JobResult = {
    status: 'wait',
    delayMs: leaseMs,
    reason: 'the Lambda invocation ran out of time before the job finished; it runs again once its lease lapses',
  };
  const notStarted: JobResult = {
    status: 'wait',
    delayMs: 0,
    reason: 'the Lambda invocation ran out of time before the job started; it runs in a later one',
  };
  const timer =
    remainingMs === undefined
      ? undefined
      : setTimeout(
          () => {
            over = true;
            for (const [settle, { work, job, fence }] of running) {
              settle(handBack);
              handedBack(work, job, fence);
            }
          },
          Math.max(0, Math.min(remainingMs - marginMs, remainingMs / 2)),
        );
  return {
    over: () => over,
    process(job) {
      if (over) return Promise.resolve(notStarted);
      return new Promise<JobResult>((resolve, reject) => {
        // The job's fence: aborted if its handler, handed back, runs on past a thaw (`thawWatch`).
        const fence = new AbortController();
        const work = process({ ...job, signal: fence.signal });
        running.set(resolve, { work, job, fence });
        work.then(resolve, reject).finally(() => running.delete(resolve));
      });
    },
    end: () => clearTimeout(timer),
  };
}

/**
 * Watches the handlers handed back by earlier invocations: a thaw that outlasted their leases is
 * reported, and their fences are aborted (their `context.signal`, with a LeaseLostError).
 */
export function thawWatch(leaseMs: number, onError: (error: Error) => void) {
  const handedBack = new Map<Promise<unknown>, { deliveryId: string; fence: AbortController }>();
  const tickMs = Math.max(10, Math.min(1_000, leaseMs / 4));
  let lastTick = Date.now();
  let timer: ReturnType<typeof setInterval> | undefined;

  function tick(): void {
    const now = Date.now();
    const gap = now - lastTick;
    lastTick = now;
    if (gap <= leaseMs || handedBack.size === 0) return;
    const ids = [...new Set([...handedBack.values()].map(({ deliveryId }) => deliveryId))].join(', ');
    const thawed = new Error(
      `sqsHandler: this execution environment was frozen for about ${gap} ms, longer than the receiver's leaseMs (${leaseMs} ms), while the handlers of ${ids} ran on after an earlier invocation handed their jobs back: their leases have lapsed, so their copies may be running elsewhere, beside them. Their context.signal is aborted (a LeaseLostError) and their completion is recorded only if no copy took the delivery over; a write they make without checking the signal or fencing it with context.fencingToken is not stopped.`,
    );
    // The fences first: a handler resuming after this tick already finds its signal aborted.
    for (const { fence } of handedBack.values()) fence.abort(thawed);
    onError(thawed);
  }

  return {
    /** A handler handed back that may run on: watched until it ends. */
    track(work: Promise<unknown>, deliveryId: string, fence: AbortController): void {
      if (handedBack.size === 0) {
        lastTick = Date.now();
        timer = setInterval(tick, tickMs);
        (timer as { unref?: () => void }).unref?.();
      }
      handedBack.set(work, { deliveryId, fence });
      const done = () => {
        handedBack.delete(work);
        if (handedBack.size === 0) clearInterval(timer);
      };
      work.then(done, done);
    },
    /** At an invocation's start: a thaw is noticed before anything else runs. */
    check: tick,
  };
}
