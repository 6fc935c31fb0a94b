// createReceiver's options: every refusal names the option and the value, at construction, and the
// limits sit exactly where the service's retry schedule puts them.
import { describe, expect, it } from 'vitest';
import type { ReceiverOptions } from './options';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import { envelope, json, SECRET, signed } from './test-support';

const HOUR = 3_600_000;

/** The configuration error createReceiver throws for these options, or `undefined`. */
function refusal(options: unknown): { code?: string; message: string } | undefined {
  try {
    createReceiver(options as ReceiverOptions);
    return undefined;
  } catch (error) {
    return error as { code?: string; message: string };
  }
}

describe('durations and sizes', () => {
  const names = [
    'retentionMs',
    'maxAgeMs',
    'deadlineMs',
    'maxBodyBytes',
    'maxFutureSkewMs',
    'leaseMs',
    'storeTimeoutMs',
    'maxRunMs',
    'bodyTimeoutMs',
  ];

  it.each(names)('refuses %s that is not a positive finite number, naming it and the value', (name) => {
    for (const value of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '1000']) {
      expect(refusal({ secret: SECRET, [name]: value })).toEqual(
        expect.objectContaining({
          code: 'CONFIGURATION_ERROR',
          message: `createReceiver: ${name} must be a positive finite number of milliseconds/bytes, got ${String(value)}`,
        }),
      );
    }
  });

  it('accepts a retention of exactly 32 h without allowShortRetention, and refuses a millisecond less', () => {
    expect(refusal({ secret: SECRET, retentionMs: 32 * HOUR, maxAgeMs: HOUR })).toBeUndefined();
    expect(refusal({ secret: SECRET, retentionMs: 32 * HOUR - 1, maxAgeMs: HOUR })?.message).toMatch(/is under 32 h/);
  });
});

describe('storeTimeoutMs against leaseMs', () => {
  // A lease taken by a call that answers only at storeTimeoutMs must still be live when the renewal sent
  // a heartbeat (leaseMs / 3) later reaches the store, which may take storeTimeoutMs too.
  it('refuses a storeTimeoutMs that could let a working receiver lose its lease, saying why and what to set', () => {
    const refused = refusal({ secret: SECRET, leaseMs: 3_000, storeTimeoutMs: 5_000 });
    expect(refused?.code).toBe('CONFIGURATION_ERROR');
    expect(refused?.message).toContain('storeTimeoutMs 5000 is too long for leaseMs 3000');
    expect(refused?.message).toContain('another attempt could then run the same handlers');
    expect(refused?.message).toContain('2 × storeTimeoutMs + leaseMs / 3 < leaseMs');
    expect(refused?.message).toContain('Lower storeTimeoutMs under 1000 ms, or raise leaseMs above 15000 ms');
  });

  it('draws the line exactly at 2 × storeTimeoutMs + leaseMs / 3 = leaseMs', () => {
    // leaseMs 12 s: renewed every 4 s, so a store call may take just under 4 s.
    expect(refusal({ secret: SECRET, leaseMs: 12_000, storeTimeoutMs: 3_999 })).toBeUndefined();
    expect(refusal({ secret: SECRET, leaseMs: 12_000, storeTimeoutMs: 4_000 })?.message).toMatch(/too long for leaseMs 12000/);
    expect(refusal({ secret: SECRET, leaseMs: 12_000, storeTimeoutMs: 5_000 })?.message).toMatch(/too long for leaseMs 12000/);
    // The way out the message offers holds: just above 3 × storeTimeoutMs.
    expect(refusal({ secret: SECRET, leaseMs: 15_001, storeTimeoutMs: 5_000 })).toBeUndefined();
    expect(refusal({ secret: SECRET, leaseMs: 15_000, storeTimeoutMs: 5_000 })?.message).toMatch(/too long/);
    expect(refusal({ secret: SECRET, storeTimeoutMs: 9_999 })).toBeUndefined(); // the default lease, 30 s
    expect(refusal({ secret: SECRET, storeTimeoutMs: 10_000 })?.message).toMatch(/too long for leaseMs 30000/);
  });

  it('defaults to a quarter of a short leaseMs, and refuses a leaseMs too short for any', async () => {
    const receiver = createReceiver({ secret: SECRET, leaseMs: 600, store: { ...memoryStore(), claim: () => new Promise(() => {}) } });
    const reported: string[] = [];
    receiver.onError((error) => reported.push(String(error)));
    receiver.on('*', () => {});
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(503);
    expect(json(answer).error?.details).toMatchObject({ reason: 'store_timeout' });
    expect(reported).toEqual([expect.stringContaining("the store's claim did not answer within 150 ms (storeTimeoutMs)")]);
    expect(refusal({ secret: SECRET, leaseMs: 2 })?.message).toMatch(/leaseMs 2 is too short: .*Raise leaseMs/);
  });
});

describe('the options object itself', () => {
  it.each([null, undefined, 'whsec_x', 42])('refuses %s in place of an options object', (options) => {
    expect(refusal(options)).toEqual(
      expect.objectContaining({ code: 'CONFIGURATION_ERROR', message: 'createReceiver: pass an options object with at least `secret`.' }),
    );
  });

  it.each<[string, unknown]>([
    ['empty', ''],
    ['an empty list', []],
    ['a list with an empty secret', [SECRET, '']],
  ])('answers every delivery with the missing-secret error when the static secret is %s, naming createReceiver', async (_, secret) => {
    const receiver = createReceiver({ secret: secret as string })
      .onError(() => {})
      .on('*', () => {});
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(500);
    expect(json(answer).error?.message).toMatch(/^createReceiver: the signing secret is empty or missing/);
  });
});

describe('completion', () => {
  it("accepts 'delivery' and 'handler' and refuses anything else, naming the value", () => {
    expect(refusal({ secret: SECRET, completion: 'delivery' })).toBeUndefined();
    expect(refusal({ secret: SECRET, completion: 'handler' })).toBeUndefined();
    for (const completion of ['', 'handlers', null]) {
      expect(refusal({ secret: SECRET, completion })).toEqual(
        expect.objectContaining({
          code: 'CONFIGURATION_ERROR',
          message: `createReceiver: completion must be 'delivery' or 'handler', got ${String(completion)}.`,
        }),
      );
    }
  });

  it("runs a named handler once per delivery under 'delivery' (the default), and once per handler under 'handler'", async () => {
    for (const completion of [undefined, 'delivery', 'handler'] as const) {
      let runs = 0;
      const receiver = createReceiver({ secret: SECRET, completion }).on(
        '*',
        () => {
          runs++;
        },
        { name: 'count' },
      );
      const input = signed(envelope());
      expect((await receiver.handle(input)).status).toBe(200);
      expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
      expect(runs).toBe(1);
    }
  });
});

describe('namespace, queue and logger', () => {
  it('refuses a namespace that is not a string', () => {
    expect(refusal({ secret: SECRET, namespace: 5 })).toEqual(
      expect.objectContaining({ code: 'CONFIGURATION_ERROR', message: 'createReceiver: namespace must be a string.' }),
    );
  });

  it('refuses a queue that lacks enqueue or work, and a logger that lacks warn or error', () => {
    const work = () => ({ close: async () => {} });
    const enqueue = async () => ({ duplicate: false });
    expect(refusal({ secret: SECRET, queue: { work } })?.message).toMatch(/^createReceiver: queue must be a DeliveryQueue/);
    expect(refusal({ secret: SECRET, queue: { enqueue } })?.message).toMatch(/^createReceiver: queue must be a DeliveryQueue/);
    expect(refusal({ secret: SECRET, queue: null })?.message).toMatch(/^createReceiver: queue must be a DeliveryQueue/);
    const log = () => {};
    expect(refusal({ secret: SECRET, logger: { info: log, warn: log } })?.message).toMatch(/^createReceiver: logger must have/);
    expect(refusal({ secret: SECRET, logger: { info: log, error: log } })?.message).toMatch(/^createReceiver: logger must have/);
    expect(refusal({ secret: SECRET, logger: null })?.message).toMatch(/^createReceiver: logger must have/);
    expect(refusal({ secret: SECRET, logger: { info: log, warn: log, error: log } })).toBeUndefined();
    // `info` is never called: a logger without it is accepted.
    expect(refusal({ secret: SECRET, logger: { warn: log, error: log } })).toBeUndefined();
  });
});
