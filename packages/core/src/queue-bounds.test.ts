// The time limits on a queue backend's calls: its own bound (withinTime), the receiver's (enqueueTimeoutMs,
// one of the two per enqueue), and the pause a closing worker cuts short.
import { describe, expect, it, vi } from 'vitest';
import { type DeliveryQueue, enqueueTimeoutMs } from './queue';
import { wakeablePause } from './wakeable-pause';
import { withinTime } from './within-time';

describe('withinTime', () => {
  it('passes a settled promise through, and otherwise rejects once the time is up, naming the call and the server', async () => {
    await expect(withinTime(Promise.resolve('done'), 1_000, 'a call', 'Redis')).resolves.toBe('done');
    await expect(withinTime(Promise.reject(new Error('refused')), 1_000, 'a call', 'Redis')).rejects.toThrow('refused');
    vi.useFakeTimers();
    try {
      const aborted = vi.fn();
      const hung = withinTime(new Promise(() => {}), 300, 'bullmq enqueue of wdl_1', 'Redis', aborted);
      const outcome = expect(hung).rejects.toThrow('bullmq enqueue of wdl_1 did not finish within 300 ms (is Redis reachable?)');
      await vi.advanceTimersByTimeAsync(300);
      await outcome;
      expect(aborted).toHaveBeenCalledOnce();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('enqueueTimeoutMs', () => {
  const queue = (commandTimeoutMs?: number) => ({ name: 'q', commandTimeoutMs }) as unknown as DeliveryQueue;

  it('adds no timer of the receiver to a queue that bounds its calls no later than storeTimeoutMs', () => {
    expect(enqueueTimeoutMs(queue(5_000), 5_000)).toBe(Number.POSITIVE_INFINITY);
    expect(enqueueTimeoutMs(queue(2_000), 5_000)).toBe(Number.POSITIVE_INFINITY);
  });

  it('bounds the enqueue by storeTimeoutMs when the queue does not bound it, or bounds it later', () => {
    expect(enqueueTimeoutMs(queue(), 5_000)).toBe(5_000);
    expect(enqueueTimeoutMs(queue(20_000), 5_000)).toBe(5_000);
    expect(enqueueTimeoutMs(queue(0), 5_000)).toBe(5_000);
  });
});

describe('wakeablePause', () => {
  it('resolves after its time, or at once when woken; a wake with no pause running does nothing', async () => {
    vi.useFakeTimers();
    try {
      const { pause, wake } = wakeablePause();
      wake();
      let slept = false;
      const sleeping = pause(60_000).then(() => (slept = true));
      await vi.advanceTimersByTimeAsync(1_000);
      expect(slept).toBe(false);
      wake();
      await sleeping;
      expect(slept).toBe(true);
      let timedOut = false;
      const timed = pause(500).then(() => (timedOut = true));
      await vi.advanceTimersByTimeAsync(500);
      await timed;
      expect(timedOut).toBe(true);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
