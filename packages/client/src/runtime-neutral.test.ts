import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

// The client must run on Bun, Deno and workerd too: Web APIs only (fetch and its streams, AbortController, TextDecoder, crypto.randomUUID).
it('imports no node-only module', () => {
  const dir = new URL('.', import.meta.url);
  const sources = readdirSync(dir).filter((name) => name.endsWith('.ts') && !name.includes('.test'));
  expect(sources.length).toBeGreaterThan(5);
  for (const name of sources) {
    // Code only: the JSDoc examples may show process.env.
    const text = readFileSync(new URL(name, dir), 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
      .join('\n');
    expect(text, name).not.toMatch(/from ['"](node:|fs|path|http|https|crypto|buffer)['"/]/);
    expect(text, name).not.toMatch(/\b(Buffer\.|process\.|require\()/);
  }
});
