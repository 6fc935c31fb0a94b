import { describe, expect, it } from 'vitest';
import { parseTimestamp } from './envelope';

describe('parseTimestamp', () => {
  it('reads the service form exactly as Date.parse does, over 20,000 instants from 1970 to 2999', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 20_000; i++) {
      const text = new Date(Math.floor(random() * Date.UTC(2999, 11, 31))).toISOString();
      expect(parseTimestamp(text), text).toBe(Date.parse(text));
    }
  });

  it('takes leap days that exist and refuses the ones that do not', () => {
    expect(parseTimestamp('2024-02-29T12:00:00.000Z')).toBe(Date.UTC(2024, 1, 29, 12));
    expect(parseTimestamp('2000-02-29T00:00:00.000Z')).toBe(Date.UTC(2000, 1, 29));
    expect(parseTimestamp('2026-02-29T00:00:00.000Z')).toBeNaN();
    expect(parseTimestamp('1900-02-29T00:00:00.000Z')).toBeNaN();
    expect(parseTimestamp('2026-04-31T00:00:00.000Z')).toBeNaN();
  });

  it("refuses a day past the month's end in every form, which Date.parse rolls over into the next month", () => {
    for (const text of ['2026-02-31T10:00:00Z', '2026-02-29T10:00+01:00', '2026-04-31T10:00:00.5Z', '2026-02-30T10:00:00.000000Z']) {
      expect(Number.isNaN(Date.parse(text)), text).toBe(false);
      expect(parseTimestamp(text), text).toBeNaN();
    }
    expect(parseTimestamp('2024-02-29T10:00:00+01:00')).toBe(Date.UTC(2024, 1, 29, 9));
  });

  it('reads other ISO 8601 forms (offsets, no milliseconds) and refuses what is not one', () => {
    expect(parseTimestamp('2026-11-22T08:58:15+01:00')).toBe(Date.UTC(2026, 10, 22, 7, 58, 15));
    expect(parseTimestamp('2026-11-22T07:58:15.267891Z')).toBe(Date.UTC(2026, 10, 22, 7, 58, 15, 267));
    for (const bad of [
      '2026-11-22 07:58:15.267Z',
      '2026-11-22T07:58:15.267',
      '2026-13-22T07:58:15.267Z',
      '2026-11-22T07:61:15.267Z',
      '2026-1x-22T07:58:15.267Z',
      'yesterday',
      '',
    ]) {
      expect(parseTimestamp(bad), bad).toBeNaN();
    }
  });
});

describe('parseTimestamp, years before 100', () => {
  it('reads them as Date.parse does (Date.UTC would read 0099 as 1999)', () => {
    for (const text of ['0000-01-01T00:00:00.000Z', '0099-06-01T00:00:00.000Z', '0100-01-01T00:00:00.000Z']) {
      expect(parseTimestamp(text)).toBe(Date.parse(text));
    }
  });
});
