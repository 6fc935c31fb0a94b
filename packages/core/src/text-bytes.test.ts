import { describe, expect, it } from 'vitest';
import { cutToBytes } from './text-bytes';

const bytes = (text: string) => new TextEncoder().encode(text).length;

describe('cutToBytes', () => {
  it('keeps a text that fits, and cuts one that does not between characters, ellipsis included', () => {
    expect(cutToBytes('short', 10)).toBe('short');
    expect(cutToBytes('x'.repeat(2_000), 1_000)).toHaveLength(998); // 997 x and a 3-byte ellipsis
    expect(bytes(cutToBytes('x'.repeat(2_000), 1_000))).toBe(1_000);
    const euros = cutToBytes('€'.repeat(1_000), 1_000); // 3,000 bytes in 1,000 characters
    expect(euros).toBe(`${'€'.repeat(332)}…`);
    expect(bytes(euros)).toBe(999);
    const faces = cutToBytes('😀'.repeat(400), 1_000);
    expect(faces).toBe(`${'😀'.repeat(249)}…`); // never half a surrogate pair
    expect(cutToBytes('é'.repeat(10), 7, '')).toBe('ééé');
  });
});
