// The receiver under faults: hung stores, failing hooks and listeners, hostile ids and signatures,
// tenants that try each other's key space, handlers that never end, stores that answer nonsense.
import { describe, expect, it, vi } from 'vitest';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import type { ClaimResult, IdempotencyStore } from './store';
import { SECRET, envelope, hmacHex, json, signed, tick } from './test-support';
import { verifySignature } from './verify';

const HOUR = 3_600_000;

/** A store whose calls can be made to hang, around a real memory store. */
function hangableStore() {
  const inner = memoryStore();
  const calls: string[] = [];
  let hang = false;
  const pending: (() => void)[] = [];
  const wrap =
    <A extends unknown[], R>(name: string, call: (...args: A) => R) =>
    (...args: A): Promise<R> => {
      calls.push(name);
      if (!hang) return Promise.resolve(call(...args));
      return new Promise<R>((resolve) => pending.push(() => resolve(call(...args))));
    };
  const store: IdempotencyStore = {
    claim: wrap('claim', inner.claim),
    complete: wrap('complete', inner.complete),
    release: wrap('release', inner.release),
    extend: wrap('extend', inner.extend),
  };
  return {
    store,
    inner,
    calls,
    hang: (value: boolean) => {
      hang = value;
    },
    recover: () => {
      hang = false;
      for (const resume of pending.splice(0)) resume();
    },
  };
}

describe('a hung store', () => {
  it('answers 503 store_timeout within storeTimeoutMs, runs nothing, and the delivery completes once after recovery', async () => {
    const { store, inner, hang, recover } = hangableStore();
    const receiver = createReceiver({ secret: SECRET, store, storeTimeoutMs: 30 }).onError(() => {});
    const handler = vi.fn();
    receiver.on('*', handler);
    const input = signed(envelope());
    hang(true);
    const answer = await receiver.handle(input);
    expect(answer.status).toBe(503);
    expect(json(answer).error?.details).toEqual({ reason: 'store_timeout' });
    expect(handler).not.toHaveBeenCalled();
    recover(); // the late claim is acquired after all: the receiver releases it at once
    await tick(5);
    expect((await receiver.handle(input)).status).toBe(200);
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
    expect(handler).toHaveBeenCalledTimes(1);
    expect(inner.size).toBe(1);
  });

  it("still answers the handlers' 200 when complete() hangs, and reports the timeout", async () => {
    const { store, hang } = hangableStore();
    const errors: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET, store, storeTimeoutMs: 30 }).onError((error) => errors.push(error));
    receiver.on('*', () => hang(true));
    expect((await receiver.handle(signed(envelope()))).status).toBe(200);
    expect(errors).toEqual([expect.objectContaining({ name: 'StoreTimeoutError', message: expect.stringContaining('complete') })]);
  });

  it('treats a claim state outside the contract as a store error (503), never as acquired', async () => {
    const weird = {
      claim: () => ({ state: 'granted' }) as unknown as ClaimResult,
      complete: () => true,
      release: () => true,
      extend: () => true,
    };
    const receiver = createReceiver({ secret: SECRET, store: weird }).onError(() => {});
    const handler = vi.fn();
    receiver.on('*', handler);
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(503);
    expect(handler).not.toHaveBeenCalled();
  });

  it('answers a store\'s data error 500 store_data_error, not 503 "unavailable"', async () => {
    const { StoreDataError } = await import('./store');
    const refusing: IdempotencyStore = {
      claim: () => Promise.reject(new StoreDataError('key not encodable')),
      complete: () => true,
      release: () => true,
      extend: () => true,
    };
    const receiver = createReceiver({ secret: SECRET, store: refusing }).onError(() => {});
    receiver.on('*', () => {});
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(500);
    expect(json(answer).error?.details).toEqual({ reason: 'store_data_error' });
  });
});

describe('hooks and listeners that reject', () => {
  it('an async hook that rejects goes to onError; a rejecting onError listener goes to console.error; nothing is unhandled', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const heard: unknown[] = [];
      const receiver = createReceiver({
        secret: SECRET,
        hooks: { handled: async () => Promise.reject(new Error('metrics backend down')) },
      });
      receiver.onError(async (error) => {
        heard.push(error);
        throw new Error('the error tracker is down too');
      });
      receiver.on('*', () => {});
      expect((await receiver.handle(signed(envelope()))).status).toBe(200);
      await tick(10);
      expect(heard).toEqual([expect.objectContaining({ message: 'metrics backend down' })]);
      expect(consoleError).toHaveBeenCalledWith(expect.stringContaining('an onError listener threw: Error: the error tracker is down too'));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
      consoleError.mockRestore();
    }
  });
});

describe('tenants', () => {
  const secrets: Record<string, string> = { acme: 'whsec_acme', evil: 'whsec_evil' };
  const tenantOf = (url: string | undefined) => url?.split('/').pop() ?? '';

  for (const [name, resolver] of [
    ['named tenants', ({ url }: { url: string | undefined }) => ({ tenant: tenantOf(url), secret: secrets[tenantOf(url)] ?? '' })],
    ['secrets only', ({ url }: { url: string | undefined }) => secrets[tenantOf(url)]],
  ] as const) {
    it(`keeps each tenant's deliveryIds apart (${name}): another tenant cannot claim a victim's id first`, async () => {
      const store = memoryStore();
      const receiver = createReceiver({ secret: resolver, store });
      const ran: string[] = [];
      receiver.on('*', (delivery) => {
        ran.push(String((delivery.data as { tenant?: string }).tenant));
      });
      const id = 'wdl_shared_0001';
      const attack = envelope({ deliveryId: id, data: { tenant: 'evil' } });
      const real = envelope({ deliveryId: id, data: { tenant: 'acme' } });
      expect((await receiver.handle({ ...signed(attack, { secret: secrets.evil }), url: '/webhooks/evil' })).status).toBe(200);
      const victim = await receiver.handle({ ...signed(real, { secret: secrets.acme }), url: '/webhooks/acme' });
      expect(json(victim)).toEqual({ ok: true });
      expect(ran).toEqual(['evil', 'acme']);
    });
  }

  it('answers 401 for a resolver that returns null, "" or [] (unknown tenant), and 503 secret_resolver_failed when it throws', async () => {
    for (const value of [null, undefined, '', []]) {
      const receiver = createReceiver({ secret: () => value as never, logger: false });
      receiver.on('*', () => {});
      const answer = await receiver.handle(signed(envelope()));
      expect(answer.status).toBe(401);
      expect(json(answer).error?.details).toEqual({ field: 'x-service-signature', issue: 'no_secret' });
    }
    const throwing = createReceiver({
      logger: false,
      secret: () => {
        throw new Error('vault down');
      },
    }).onError(() => {});
    const answer = await throwing.handle(signed(envelope()));
    expect(answer.status).toBe(503);
    expect(json(answer).error).toMatchObject({
      details: { reason: 'secret_resolver_failed' },
      message: expect.stringContaining('secret resolver'),
    });
  });
});

describe('replay window and retention', () => {
  it('remembers a delivery timestamped in the future for as long as it stays fresh: a replay at +72 h 01 min is a duplicate', async () => {
    let now = Date.parse('2026-01-01T00:00:00.000Z');
    const clock = () => now;
    const receiver = createReceiver({ secret: SECRET, store: memoryStore({ now: clock }), now: clock, logger: false });
    const handler = vi.fn();
    receiver.on('*', handler);
    const input = signed(envelope({ timestamp: new Date(now + 5 * 60_000).toISOString() })); // at the skew's edge
    expect((await receiver.handle(input)).status).toBe(200);
    now += 72 * HOUR + 60_000; // past the plain retention, still within timestamp + maxAge
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
    now += 4 * 60_000 + 1; // now past timestamp + maxAge: refused as too old, never run
    expect(json(await receiver.handle(input)).error?.details).toEqual({ field: 'timestamp', issue: 'too_old' });
    expect(handler).toHaveBeenCalledTimes(1);
  });
});

describe('deliveryId', () => {
  const cases: [string, string, string][] = [
    ['a NUL character', 'wdl_a\u0000b', 'control_character'],
    ['a lone high surrogate', 'wdl_X\ud800', 'not_well_formed'],
    ['a lone low surrogate', 'wdl_X\udfff', 'not_well_formed'],
    ['257 characters', `wdl_${'x'.repeat(253)}`, 'too_long'],
  ];
  for (const [name, id, issue] of cases) {
    it(`refuses ${name} with 400 naming the field and issue`, async () => {
      const receiver = createReceiver({ secret: SECRET, logger: false });
      receiver.on('*', () => {});
      const answer = await receiver.handle(signed(envelope({ deliveryId: id }), { headers: { 'x-service-delivery-id': undefined } }));
      expect(answer.status).toBe(400);
      expect(json(answer).error?.details).toEqual({ field: 'deliveryId', issue });
    });
  }

  it('accepts 256 characters and astral characters (well-formed surrogate pairs)', async () => {
    const receiver = createReceiver({ secret: SECRET });
    receiver.on('*', () => {});
    for (const id of [`wdl_${'x'.repeat(252)}`, 'wdl_\u{1F600}']) {
      expect(
        (await receiver.handle(signed(envelope({ deliveryId: id }), { headers: { 'x-service-delivery-id': undefined } }))).status,
      ).toBe(200);
    }
  });
});

describe('verifySignature', () => {
  it('refuses 64 characters that are not lower-case hex even when node would decode them (low bytes that are digits)', async () => {
    const body = '{"a":1}';
    const hex = hmacHex(body);
    // Each character's low byte is the hex digit, its high byte is not zero: not a hex string.
    const disguised = [...hex].map((c) => String.fromCharCode(0x4e00 + c.charCodeAt(0))).join('');
    expect(Buffer.from(disguised, 'hex').toString('hex')).toBe(hex); // node's decoder reads it as the real signature
    expect(await verifySignature(body, disguised, SECRET)).toBe(false);
    expect(await verifySignature(body, hex.toUpperCase(), SECRET)).toBe(false);
    expect(await verifySignature(body, hex, SECRET)).toBe(true);
  });

  it('never verifies with an empty secret', async () => {
    const body = '{"a":1}';
    expect(await verifySignature(body, hmacHex(body, ''), '')).toBe(false);
    expect(await verifySignature(body, hmacHex(body, ''), ['', ''])).toBe(false);
  });
});

describe('a handler that never finishes', () => {
  it('holds its lease only for maxRunMs: then the next attempt may claim it, `failed` reports the overrun, and no timer is kept', async () => {
    const failed = vi.fn();
    const errors: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET, leaseMs: 30, deadlineMs: 10, maxRunMs: 60, hooks: { failed } }).onError((error) =>
      errors.push(error),
    );
    let runs = 0;
    receiver.on('*', () => {
      runs += 1;
      return runs === 1 ? new Promise<void>(() => {}) : undefined;
    });
    const input = signed(envelope());
    expect((await receiver.handle(input)).status).toBe(503);
    expect((await receiver.handle(input)).status).toBe(409); // heartbeats hold it while under maxRunMs
    await tick(140); // past maxRunMs, then past the last renewed lease
    expect(failed).toHaveBeenCalledWith(
      expect.objectContaining({ permanent: false, error: expect.objectContaining({ message: expect.stringContaining('maxRunMs') }) }),
    );
    expect((await receiver.handle(input)).status).toBe(200);
    expect(runs).toBe(2);
  });
});

describe('a completion after a lapsed lease', () => {
  it('completes when nobody else claimed the delivery meanwhile, so a replay is a duplicate', async () => {
    let now = 1_000_000;
    const store = memoryStore({ now: () => now });
    const receiver = createReceiver({ secret: SECRET, store, leaseMs: 1_000 }).onError(() => {});
    let finish!: () => void;
    receiver.on('*', () => new Promise<void>((resolve) => (finish = resolve)));
    const input = signed(envelope());
    const answer = receiver.handle(input);
    await tick(1);
    now += 5_000; // a stall longer than the lease; nobody claims meanwhile
    finish();
    expect((await answer).status).toBe(200);
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
  });
});
