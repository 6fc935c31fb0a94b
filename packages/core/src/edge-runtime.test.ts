// The receiver on a runtime without node:crypto (Cloudflare Workers, Vercel Edge, Deno Deploy): the
// signature is checked with Web Crypto, which answers with a promise.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HandlerContext } from './context';
import { envelope, hmacHex, json, SECRET, signed } from './test-support';

type ReceiverModule = typeof import('./receiver');
type VerifyModule = typeof import('./verify');

interface ProcessWithBuiltins {
  getBuiltinModule?: unknown;
}

/** Loads the receiver as an edge runtime would: `process.getBuiltinModule` is missing, so node:crypto is too. */
async function loadWithoutNodeCrypto(): Promise<{ receiver: ReceiverModule; verify: VerifyModule }> {
  const proc = process as ProcessWithBuiltins;
  const original = proc.getBuiltinModule;
  vi.resetModules();
  proc.getBuiltinModule = undefined;
  try {
    return { receiver: await import('./receiver'), verify: await import('./verify') };
  } finally {
    proc.getBuiltinModule = original;
    vi.resetModules();
  }
}

let edge: { receiver: ReceiverModule; verify: VerifyModule };
beforeAll(async () => {
  edge = await loadWithoutNodeCrypto();
});
afterAll(() => {
  vi.resetModules();
});

describe('the receiver without node:crypto (Web Crypto)', () => {
  it('runs on the asynchronous path', () => {
    expect(edge.verify.hasNodeCrypto).toBe(false);
    expect(edge.verify.matchSignature(Buffer.from('{}'), hmacHex('{}'), [SECRET])).toBeInstanceOf(Promise);
  });

  it('accepts a delivery signed with the second secret of a rotation and tells the handler which secret matched', async () => {
    const receiver = edge.receiver.createReceiver({ secret: ['whsec_new', SECRET] });
    const seen: HandlerContext[] = [];
    receiver.on('message.delivered', (_delivery, context) => {
      seen.push(context);
    });
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(200);
    expect(json(answer)).toEqual({ ok: true });
    expect(seen.map((context) => context.secretIndex)).toEqual([1]);
  });

  it('answers a duplicate as a duplicate, the first secret as index 0', async () => {
    const receiver = edge.receiver.createReceiver({ secret: [SECRET, 'whsec_old'] });
    const indexes: number[] = [];
    receiver.on('message.delivered', (_delivery, context) => {
      indexes.push(context.secretIndex);
    });
    const input = signed(envelope());
    expect((await receiver.handle(input)).status).toBe(200);
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
    expect(indexes).toEqual([0]);
  });

  it('refuses a tampered body, a signature by another secret and a malformed signature with 401, running nothing', async () => {
    const receiver = edge.receiver.createReceiver({ secret: SECRET, logger: false });
    const handler = vi.fn();
    receiver.on('*', handler);
    const input = signed(envelope());
    const tampered = { ...input, body: Buffer.from(Buffer.from(input.body).toString('utf8').replace('msg_1', 'msg_2')) };
    const answers = [
      await receiver.handle(tampered),
      await receiver.handle(signed(envelope(), { secret: 'whsec_other' })),
      await receiver.handle(signed(envelope(), { headers: { 'x-service-signature': hmacHex('x').toUpperCase() } })),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401]);
    expect(answers.map((answer) => json(answer).error?.details?.issue)).toEqual(['mismatch', 'mismatch', 'malformed']);
    expect(handler).not.toHaveBeenCalled();
  });

  it('verifies per-tenant secrets from a resolver, keeping the matched index', async () => {
    const receiver = edge.receiver.createReceiver({
      logger: false,
      secret: async ({ header }) => (header('x-tenant') === 'acme' ? { tenant: 'acme', secret: ['whsec_a0', SECRET] } : undefined),
    });
    const indexes: number[] = [];
    receiver.on('message.delivered', (_delivery, context) => {
      indexes.push(context.secretIndex);
    });
    const ok = await receiver.handle(signed(envelope(), { headers: { 'x-tenant': 'acme' } }));
    const unknown = await receiver.handle(signed(envelope(), { headers: { 'x-tenant': 'other' } }));
    const wrong = await receiver.handle(signed(envelope(), { secret: 'whsec_x', headers: { 'x-tenant': 'acme' } }));
    expect([ok.status, unknown.status, wrong.status]).toEqual([200, 401, 401]);
    expect(indexes).toEqual([1]);
  });

  it('never verifies with an empty secret on the Web Crypto path either', async () => {
    const body = Buffer.from(JSON.stringify(envelope()));
    const withEmptyKey = createHmac('sha256', '').update(body).digest('hex');
    expect(await edge.verify.verifySignature(body, withEmptyKey, '')).toBe(false);
    expect(await edge.verify.verifySignature(body, withEmptyKey, ['', ''])).toBe(false);
    expect(await edge.verify.verifySignature(body, hmacHex(body), ['', SECRET])).toBe(true);
  });

  it('verifies a string body as its UTF-8 bytes, and picks the first of two matching secrets', async () => {
    const text = JSON.stringify(envelope({ data: { text: 'héllo 👋' } }));
    expect(await edge.verify.verifySignature(text, hmacHex(Buffer.from(text)), SECRET)).toBe(true);
    expect(await edge.verify.matchSignature(Buffer.from(text), hmacHex(text), [SECRET, SECRET])).toBe(0);
  });

  it('keys a delivery by namespace and deliveryId alone when the secrets are static', async () => {
    const keys: string[] = [];
    const store = {
      claim: (key: string) => {
        keys.push(key);
        return { state: 'acquired', attempt: 1 } as const;
      },
      complete: () => true,
      release: () => true,
      extend: () => true,
    };
    const receiver = edge.receiver.createReceiver({ secret: SECRET, store });
    receiver.on('*', () => {});
    const body = envelope();
    expect((await receiver.handle(signed(body))).status).toBe(200);
    expect(keys).toEqual([`hookline:${body.deliveryId}`]);
  });
});

describe('a runtime whose getBuiltinModule throws', () => {
  it('falls back to Web Crypto', async () => {
    const proc = process as ProcessWithBuiltins;
    const original = proc.getBuiltinModule;
    vi.resetModules();
    proc.getBuiltinModule = () => {
      throw new Error('not available here');
    };
    let verify: VerifyModule;
    try {
      verify = await import('./verify');
    } finally {
      proc.getBuiltinModule = original;
      vi.resetModules();
    }
    expect(verify.hasNodeCrypto).toBe(false);
    expect(await verify.verifySignature('{}', hmacHex('{}'), SECRET)).toBe(true);
  });
});
