import { describe, expect, it } from 'vitest';
import { cpuTicks, stolenPercent } from './machine';

describe('the steal share in RESULTS.md', () => {
  it('is the stolen ticks over all ticks between two readings', () => {
    expect(stolenPercent({ total: 1_000, steal: 10 }, { total: 3_000, steal: 510 })).toBe('25.0%');
    expect(stolenPercent({ total: 1_000, steal: 10 }, { total: 1_400, steal: 10 })).toBe('0.0%');
  });

  it("says 'n/a' when a reading is missing or the clock did not move", () => {
    expect(stolenPercent(undefined, { total: 10, steal: 0 })).toBe('n/a');
    expect(stolenPercent({ total: 10, steal: 0 }, undefined)).toBe('n/a');
    expect(stolenPercent({ total: 10, steal: 0 }, { total: 10, steal: 0 })).toBe('n/a');
  });

  it('reads /proc/stat on Linux (counters that only grow), and nothing elsewhere', () => {
    const first = cpuTicks();
    if (process.platform !== 'linux') {
      expect(first).toBeUndefined();
      return;
    }
    const second = cpuTicks();
    expect(first).toBeDefined();
    expect(second?.total).toBeGreaterThanOrEqual(first?.total ?? Number.POSITIVE_INFINITY);
    expect(first?.steal).toBeGreaterThanOrEqual(0);
    expect(first?.steal).toBeLessThanOrEqual(first?.total ?? 0);
  });
});
