// The body-read deadlines of the node path (node-deadlines.ts): one interval for every read, the reads linked
// through their own fields. Fake timers drive both the interval and Date.now().
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearDeadline, type Expiring, setDeadline } from './node-deadlines';

class Read implements Expiring {
  deadlineAt = 0;
  deadlinePrev: Expiring | undefined = undefined;
  deadlineNext: Expiring | undefined = undefined;
  expired = 0;
  constructor(readonly name: string) {}
  expire(): void {
    this.expired++;
  }
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('body-read deadlines', () => {
  it('expires each read once its own limit has passed (never before it, at most a tick after), in any order of limits', () => {
    const slow = new Read('slow');
    const fast = new Read('fast');
    const middle = new Read('middle');
    setDeadline(1_000, slow);
    setDeadline(200, fast);
    setDeadline(500, middle);
    vi.advanceTimersByTime(199);
    expect([slow.expired, fast.expired, middle.expired]).toEqual([0, 0, 0]);
    vi.advanceTimersByTime(51 + 50);
    expect([slow.expired, fast.expired, middle.expired]).toEqual([0, 1, 0]);
    vi.advanceTimersByTime(300);
    expect([slow.expired, fast.expired, middle.expired]).toEqual([0, 1, 1]);
    vi.advanceTimersByTime(500);
    expect([slow.expired, fast.expired, middle.expired]).toEqual([1, 1, 1]);
    vi.advanceTimersByTime(5_000);
    expect([slow.expired, fast.expired, middle.expired]).toEqual([1, 1, 1]);
    expect([slow.deadlineAt, fast.deadlineAt, middle.deadlineAt]).toEqual([0, 0, 0]);
  });

  it('never expires a read cleared first, wherever it sat in the list, and keeps the others running', () => {
    const reads = ['a', 'b', 'c', 'd', 'e'].map((name) => new Read(name));
    for (const read of reads) setDeadline(100, read);
    const [a, b, c, d, e] = reads as [Read, Read, Read, Read, Read];
    clearDeadline(c); // the middle
    clearDeadline(a); // the head
    clearDeadline(e); // the tail
    clearDeadline(e); // twice: a no-op
    for (const read of [a, c, e]) expect([read.deadlineAt, read.deadlinePrev, read.deadlineNext]).toEqual([0, undefined, undefined]);
    vi.advanceTimersByTime(1_000);
    expect(reads.map((read) => read.expired)).toEqual([0, 1, 0, 1, 0]);
    expect([b.deadlineAt, d.deadlineAt]).toEqual([0, 0]);
  });

  it('starts again after the list emptied, and a read given a new deadline keeps only the new one', () => {
    const early = new Read('early');
    setDeadline(100, early);
    clearDeadline(early);
    vi.advanceTimersByTime(1_000); // the list was empty: the interval stopped
    const later = new Read('later');
    setDeadline(100, later);
    setDeadline(5_000, later);
    vi.advanceTimersByTime(1_000);
    expect([early.expired, later.expired]).toEqual([0, 0]);
    vi.advanceTimersByTime(5_000);
    expect(later.expired).toBe(1);
  });

  it('lets a read clear itself, or another due read, from expire() without disturbing the sweep', () => {
    const other = new Read('other');
    const self = new (class extends Read {
      override expire(): void {
        super.expire();
        clearDeadline(this);
        clearDeadline(other);
      }
    })('self');
    setDeadline(100, self);
    setDeadline(100, other);
    vi.advanceTimersByTime(1_000);
    expect([self.expired, other.expired]).toEqual([1, 1]);
  });
});
