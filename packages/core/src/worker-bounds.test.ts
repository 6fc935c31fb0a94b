// What a worker tells its queue when a job cannot run yet (wait, no try spent), when a handler runs past
// maxRunMs (fail, slot freed), and what close() does about handlers that never end (hand back, bounded).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStore } from './memory-store';
import type { DeliveryQueue, JobResult, QueuedDelivery, QueueJob } from './queue';
import { createReceiver } from './receiver';
import { envelope, SECRET } from './test-support';
import { waitDelayMs } from './job-result';

/** A queue that hands the receiver's processor to the test, and whose close() waits for running jobs as backends do. */
function directQueue() {
  let processor: ((job: QueueJob) => Promise<JobResult>) | undefined;
  const running = new Set<Promise<unknown>>();
  const queue: DeliveryQueue = {
    name: 'direct',
    enqueue: async () => ({ duplicate: false }),
    work(process) {
      processor = process;
      return {
        close: async () => {
          await Promise.allSettled([...running]);
        },
      };
    },
    deadLetters: async () => [],
    replay: async () => false,
    replayAll: async () => 0,
    close: async () => {},
  };
  const run = (payload: QueuedDelivery, attempt = 1): Promise<JobResult> => {
    if (processor === undefined) throw new Error('receiver.work() was not called');
    const result = processor({ payload, attempt, maxAttempts: 7 });
    running.add(result);
    void result.then(
      () => running.delete(result),
      () => running.delete(result),
    );
    return result;
  };
  return { queue, run };
}

const job = (data: Record<string, unknown> = {}): QueuedDelivery => ({
  delivery: envelope({ event: 'line.status_changed', data: { lineId: 'lin_1', ...data } }) as unknown as QueuedDelivery['delivery'],
  receivedAt: Date.now(),
  secretIndex: 0,
});

/** Settles as the promise does, recording what it gave. */
function watch<T>(promise: Promise<T>) {
  const seen: { value?: T; error?: unknown; settled: boolean } = { settled: false };
  promise.then(
    (value) => Object.assign(seen, { value, settled: true }),
    (error: unknown) => Object.assign(seen, { error, settled: true }),
  );
  return seen;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('a job whose resource is busy', () => {
  it('waits without spending a try (a wait result, not a rejection), and runs once the resource is free', async () => {
    const { queue, run } = directQueue();
    const store = memoryStore();
    const runs: number[] = [];
    let finish!: () => void;
    const receiver = createReceiver({ secret: SECRET, store, queue }).onError(() => {});
    receiver.on(
      'line.status_changed',
      (d) => {
        runs.push(Number(d.data.seq));
        if (d.data.seq === 1) return new Promise<void>((resolve) => (finish = resolve));
      },
      { name: 'status', order: { key: (d) => String(d.data.lineId) } },
    );
    receiver.work({ concurrency: 2 });

    const first = run(job({ seq: 1 }));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = job({ seq: 2 });
    const waited = await run(second);
    expect(waited).toMatchObject({
      status: 'wait',
      reason: expect.stringMatching(/is resource_busy: waiting \d+ ms without spending a try/),
    });
    expect((waited as { delayMs: number }).delayMs).toBeGreaterThan(0);
    expect(runs).toEqual([1]);

    finish();
    expect(await first).toEqual({ status: 'done' });
    expect(await run(second)).toEqual({ status: 'done' });
    expect(runs).toEqual([1, 2]);
  });

  it('waits longer with each claim of its delivery, up to the holder lease, with jitter either side', () => {
    const busy = { kind: 'wait' as const, waitMs: 30_000, reason: 'resource_busy' as const };
    const at = (claims: number, random: number) => waitDelayMs(busy, claims, () => random);
    expect([at(1, 0.5), at(2, 0.5), at(3, 0.5), at(4, 0.5)]).toEqual([250, 500, 1_000, 2_000]);
    expect(at(1, 0)).toBe(125);
    expect(at(1, 0.999_999)).toBe(375);
    expect(at(40, 0.5)).toBe(30_000); // never past what the holder's lease has left
    expect(waitDelayMs({ ...busy, waitMs: 40 }, 5, () => 0.5)).toBe(250); // a lease about to end: one short wait
    // A predecessor: the service's own gap, plus up to a fifth; another worker on the same delivery: its lease.
    expect(waitDelayMs({ kind: 'wait', waitMs: 120_000, reason: 'predecessor_not_seen' }, 2, () => 1)).toBe(144_000);
    expect(waitDelayMs({ kind: 'wait', waitMs: 20_000, reason: 'in_progress' }, 0, () => 0)).toBe(20_000);
  });
});

describe('a handler that runs past maxRunMs in a worker', () => {
  it('fails its job at maxRunMs (retried like a throw), aborts its signal, and the retry waits for the leases to lapse', async () => {
    vi.useFakeTimers();
    const { queue, run } = directQueue();
    const store = memoryStore();
    const errors: string[] = [];
    const receiver = createReceiver({ secret: SECRET, store, queue, leaseMs: 3_000, maxRunMs: 60_000 }).onError((error) => {
      errors.push((error as Error).message);
    });
    let signal: AbortSignal | undefined;
    receiver.on('line.status_changed', (_, context) => {
      signal = context.signal;
      return new Promise<void>(() => {}); // never ends
    });
    receiver.work();
    const hung = job();
    const first = watch(run(hung));
    await vi.advanceTimersByTimeAsync(59_000);
    expect(first.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(first.error).toBeInstanceOf(Error);
    expect((first.error as Error).message).toMatch(/ran past maxRunMs \(60000 ms\); the job is retried once their leases lapse/);
    expect(signal?.aborted).toBe(true);
    expect(errors.some((message) => message.includes('ran past maxRunMs'))).toBe(true);

    // Retried at once, it finds the lease still live: it waits (no try spent) rather than run beside the hung handler.
    expect(await run(hung, 2)).toMatchObject({ status: 'wait' });
  });
});

describe('close()', () => {
  it('resolves within closeTimeoutMs whatever the handlers do, handing the unfinished job back (a wait of leaseMs)', async () => {
    vi.useFakeTimers();
    const { queue, run } = directQueue();
    const receiver = createReceiver({ secret: SECRET, queue, leaseMs: 4_000 });
    receiver.on('line.status_changed', () => new Promise<void>(() => {}));
    const worker = receiver.work({ closeTimeoutMs: 2_000 });
    const running = watch(run(job()));
    await vi.advanceTimersByTimeAsync(10);
    const closed = watch(worker.close());
    await vi.advanceTimersByTimeAsync(1_900);
    expect(closed.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(closed).toEqual({ value: undefined, settled: true });
    expect(running.value).toMatchObject({
      status: 'wait',
      delayMs: 4_000,
      reason: expect.stringContaining('the worker closed before the job finished'),
    });
  });

  it("resolves 5 s past closeTimeoutMs when the backend's own close never does (its server gone), and reports it as the queue's", async () => {
    vi.useFakeTimers();
    const queue: DeliveryQueue = {
      ...directQueue().queue,
      work: () => ({ close: () => new Promise<void>(() => {}) }),
    };
    const errors: string[] = [];
    const phases: string[] = [];
    const worker = createReceiver({ secret: SECRET, queue })
      .onError((error, info) => {
        errors.push((error as Error).message);
        phases.push(info.phase);
      })
      .work({ closeTimeoutMs: 1_000 });
    const closed = watch(worker.close());
    await vi.advanceTimersByTimeAsync(5_900);
    expect(closed.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(closed.settled).toBe(true);
    expect(errors).toEqual([
      'hookline: the direct worker did not close within 6000 ms (closeTimeoutMs + 5000 ms): is its server reachable? close() resolved without it',
    ]);
    expect(phases).toEqual(['queue']);
  });

  it('resolves as soon as the running jobs finish, and refuses a closeTimeoutMs that is not a duration', async () => {
    const { queue, run } = directQueue();
    const receiver = createReceiver({ secret: SECRET, queue });
    receiver.on('line.status_changed', () => new Promise<void>((resolve) => setTimeout(resolve, 20)));
    const worker = receiver.work({ closeTimeoutMs: 60_000 });
    const done = run(job());
    await worker.close();
    expect(await done).toEqual({ status: 'done' });
    for (const closeTimeoutMs of [-1, Number.NaN, '5' as unknown as number]) {
      expect(() => createReceiver({ secret: SECRET, queue }).work({ closeTimeoutMs })).toThrow(
        /closeTimeoutMs must be a number of milliseconds/,
      );
    }
  });
});
