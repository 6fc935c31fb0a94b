import { describe, expect, it } from 'vitest';
import { waitInWholeSeconds } from './whole-seconds';

describe('waitInWholeSeconds', () => {
  it('rounds down or up in proportion to the fraction', () => {
    expect(waitInWholeSeconds(1_300, () => 0.29)).toBe(2);
    expect(waitInWholeSeconds(1_300, () => 0.31)).toBe(1);
    expect(waitInWholeSeconds(250, () => 0.1)).toBe(1);
    expect(waitInWholeSeconds(250, () => 0.5)).toBe(0);
  });

  it('keeps whole seconds as they are, and a negative wait at zero', () => {
    expect(waitInWholeSeconds(3_000, () => 0)).toBe(3);
    expect(waitInWholeSeconds(3_000, () => 0.999)).toBe(3);
    expect(waitInWholeSeconds(-50, () => 0)).toBe(0);
  });

  it('keeps the mean wait asked for, where rounding up would not', () => {
    let state = 1;
    const random = () => {
      state = (state * 48_271) % 2_147_483_647; // a fixed sequence: the test cannot flake
      return state / 2_147_483_647;
    };
    const waits = Array.from({ length: 10_000 }, () => waitInWholeSeconds(400, random));
    const mean = waits.reduce((sum, seconds) => sum + seconds, 0) / waits.length;
    expect(mean).toBeGreaterThan(0.37);
    expect(mean).toBeLessThan(0.43);
    expect(new Set(waits)).toEqual(new Set([0, 1]));
  });
});
