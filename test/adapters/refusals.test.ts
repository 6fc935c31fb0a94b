// One place for refusals: every refusal the node bridge and the Express, Hono, Fastify and Next
// adapters give before the receiver sees a request is built by @hookline/core/adapter's builders, so
// statuses and bodies match the receiver's own; and the `fix` each hands to bodyAlreadyParsed() is the
// advice alone (the builder already says that hookline needs the raw body and that it was parsed).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const SOURCES = [
  'packages/core/src/node-handler.ts',
  'packages/core/src/body.ts',
  'packages/express/src/webhook-handler.ts',
  'packages/hono/src/webhook-handler.ts',
  'packages/fastify/src/webhook-plugin.ts',
  'packages/next/src/webhook-route.ts',
];
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe.each(SOURCES)('%s', (path) => {
  it('builds no refusal of its own: no HooklineError, no refuse(), no status written by hand', () => {
    const source = read(path);
    expect(source).not.toMatch(/new HooklineError\(/);
    expect(source).not.toMatch(/\brefuse\(/);
    expect(source).not.toMatch(/status(Code)?\s*[:=]\s*[45]\d\d|\.code\([45]\d\d\)|writeHead\([45]\d\d/);
  });

  it('hands bodyAlreadyParsed() the advice only', () => {
    const source = read(path);
    // The fix constants (…_FIX) and any literal passed to bodyAlreadyParsed().
    const fixes = [
      ...source.matchAll(/_FIX =\s*\n?\s*(['"`])([\s\S]*?)\1;/g),
      ...source.matchAll(/bodyAlreadyParsed\(\s*(['"`])([\s\S]*?)\1\s*\)/g),
    ].map((match) => match[2] ?? '');
    for (const fix of fixes) {
      expect(fix).not.toMatch(/hookline needs|already (parsed|consumed|read)|before hookline did/i);
      expect(fix).toMatch(/^(Mount|Remove|Add|Hand)\b/);
    }
  });
});
