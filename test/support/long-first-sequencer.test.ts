import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LONGEST_FILES } from './long-first-sequencer';

const ROOT = join(import.meta.dirname, '../..');

describe('the longest files the sequencer starts first', () => {
  it('names test files that exist, each once (a renamed file would silently start late again)', () => {
    expect(LONGEST_FILES.filter((file) => !existsSync(join(ROOT, file)))).toEqual([]);
    expect(new Set(LONGEST_FILES).size).toBe(LONGEST_FILES.length);
  });
});
