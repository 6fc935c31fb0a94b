import { describe, expect, it } from 'vitest';
import { createManualClock } from './clock';

describe('createManualClock', () => {
  it('runs callbacks in time order, only up to the advanced time', async () => {
    const clock = createManualClock(1_000);
    const ran: string[] = [];
    clock.setTimeout(() => ran.push(`b@${clock.now()}`), 200);
    clock.setTimeout(() => ran.push(`a@${clock.now()}`), 100);
    const cancelled = clock.setTimeout(() => ran.push('never'), 150);
    clock.clearTimeout(cancelled);
    await clock.advance(150);
    expect(ran).toEqual(['a@1100']);
    expect(clock.now()).toBe(1_150);
    await clock.advance(50);
    expect(ran).toEqual(['a@1100', 'b@1200']);
    expect(clock.pending).toBe(0);
  });

  it('waits for the work a callback starts, and for tracked work, before moving on', async () => {
    const clock = createManualClock(0);
    const log: string[] = [];
    let release!: () => void;
    clock.track(
      new Promise<void>((resolve) => (release = resolve)).then(() => {
        log.push('tracked done');
        clock.setTimeout(async () => {
          await Promise.resolve();
          log.push(`retry at ${clock.now()}`);
          clock.setTimeout(() => log.push(`last at ${clock.now()}`), 1_000);
        }, 30_000);
      }),
    );
    const all = clock.runAll();
    release();
    await all;
    expect(log).toEqual(['tracked done', 'retry at 30000', 'last at 31000']);
  });

  it('stops a callback that reschedules forever', async () => {
    const clock = createManualClock(0);
    const again = (): void => void clock.setTimeout(again, 1);
    again();
    await expect(clock.runAll(50)).rejects.toThrow(/reschedules forever/);
  });
});
