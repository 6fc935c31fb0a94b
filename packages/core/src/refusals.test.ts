// Every refusal's status, body and report, and the envelope's field checks at their edges.
import diagnostics from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bodyAlreadyParsed, errorAnswer, methodNotAllowed, notFound, payloadTooLarge, requestTimeout } from './answers';
import { STORE_CHANNEL, type StoreOperationMessage } from './diagnostics';
import { parseEnvelope } from './envelope';
import { HooklineError, PermanentFailure } from './errors';
import type { ErrorInfo } from './hooks';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import type { ClaimResult, IdempotencyStore } from './store';
import { StoreDataError } from './store';
import { envelope, json, SECRET, signed, tick } from './test-support';

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

const bodyOf = (answer: { body: string }) => JSON.parse(answer.body) as unknown;

describe('the refusals adapters give', () => {
  it('have the service error shape, the status and the headers each needs', () => {
    expect(requestTimeout(10_000)).toMatchObject({ status: 408, headers: { connection: 'close' } });
    expect(bodyOf(errorAnswer(requestTimeout(10_000)))).toEqual({
      error: { code: 'REQUEST_TIMEOUT', message: 'The request body did not arrive within 10000 ms.', details: { limitMs: 10_000 } },
    });
    expect(errorAnswer(payloadTooLarge(1_024)).headers).toEqual({ 'content-type': 'application/json', connection: 'close' });
    expect(errorAnswer(notFound('/webhooks'))).toEqual({
      status: 404,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: { code: 'NOT_FOUND', message: 'No webhook endpoint at this path; deliveries go to /webhooks.' } }),
    });
    expect(errorAnswer(methodNotAllowed('GET'))).toEqual({
      status: 405,
      headers: { 'content-type': 'application/json', allow: 'POST' },
      body: JSON.stringify({ error: { code: 'METHOD_NOT_ALLOWED', message: 'Webhook deliveries are POSTed; got GET.' } }),
    });
    expect(bodyOf(errorAnswer(bodyAlreadyParsed('Mount it before express.json().')))).toEqual({
      error: {
        code: 'CONFIGURATION_ERROR',
        message: 'hookline needs the raw request body to verify the signature, but it was already parsed. Mount it before express.json().',
      },
    });
  });

  it('answer anything that is not a HooklineError with 500 INTERNAL_ERROR, a message and nothing of the error', () => {
    const answer = createReceiver({ secret: SECRET }).answerError(new Error('secret internals'));
    expect(answer).toEqual({
      status: 500,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: { code: 'INTERNAL_ERROR', message: 'The receiver failed unexpectedly; the service will retry.' } }),
    });
  });
});

describe('answers from the receiver', () => {
  it('409 says why and when to come back', async () => {
    const receiver = createReceiver({ secret: SECRET });
    let finish!: () => void;
    receiver.on('*', () => new Promise<void>((resolve) => (finish = resolve)));
    const input = signed(envelope());
    const first = receiver.handle(input);
    await tick(5);
    expect(bodyOf(await receiver.handle(input))).toEqual({
      error: {
        code: 'CONFLICT',
        message: 'This delivery is being handled by another attempt right now; retry later.',
        details: { reason: 'in_progress', retryAfterSeconds: 30 },
      },
    });
    finish();
    await first;
  });

  it('a HooklineError a handler throws is a handler failure (500, retried), not the refusal it names', async () => {
    const receiver = createReceiver({ secret: SECRET });
    receiver.onError(() => {});
    receiver.on('*', () => {
      throw new HooklineError('VALIDATION_ERROR', 'a bug in the handler');
    });
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(500);
    expect(json(answer).error?.code).toBe('INTERNAL_ERROR');
  });

  it('a PermanentFailure is answered 200, reported to the failed hook and not as an error', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const errors: unknown[] = [];
    receiver.onError((error) => errors.push(error));
    receiver.on('*', () => {
      throw new PermanentFailure('unknown message');
    });
    expect(json(await receiver.handle(signed(envelope())))).toEqual({ ok: true, failed: true });
    expect(errors).toEqual([]);
  });

  it('an x-service-delivery-id header that disagrees with the body is named in the message', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    const answer = await receiver.handle(signed(envelope(), { headers: { 'x-service-delivery-id': 'wdl_other' } }));
    expect(json(answer).error).toEqual({
      code: 'VALIDATION_ERROR',
      message: "The x-service-delivery-id header does not match the body's deliveryId.",
      details: { field: 'x-service-delivery-id', issue: 'does_not_match_body' },
    });
  });

  it('a receiver without its secret reports the configuration error on every delivery', async () => {
    const receiver = createReceiver({ secret: undefined });
    const reports: ErrorInfo[] = [];
    receiver.onError((_error, info) => {
      reports.push(info);
    });
    expect((await receiver.handle(signed(envelope()))).status).toBe(500);
    expect(reports).toEqual([{ phase: 'configuration' }]);
  });
});

describe('per-tenant resolvers', () => {
  it('a resolver that throws is reported with phase secret', async () => {
    const failure = new Error('vault unreachable');
    const receiver = createReceiver({
      secret: () => {
        throw failure;
      },
    });
    const reports: [unknown, ErrorInfo][] = [];
    receiver.onError((error, info) => {
      reports.push([error, info]);
    });
    expect((await receiver.handle(signed(envelope()))).status).toBe(503);
    expect(reports).toEqual([[failure, { phase: 'secret' }]]);
  });

  it('refuses an empty tenant id, or one that is not a string, with 500 CONFIGURATION_ERROR naming the fix', async () => {
    for (const tenant of ['', 42]) {
      const receiver = createReceiver({ secret: () => ({ tenant: tenant as string, secret: SECRET }), logger: false });
      receiver.on('*', () => {});
      const answer = await receiver.handle(signed(envelope()));
      expect(answer.status).toBe(500);
      expect(json(answer).error).toEqual({
        code: 'CONFIGURATION_ERROR',
        message: 'The secret resolver returned an empty tenant; return { tenant, secret } with a non-empty tenant id.',
      });
    }
  });

  it('refuses a list holding an empty secret with 500, naming the resolver', async () => {
    const receiver = createReceiver({ secret: () => ['', SECRET], logger: false });
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(500);
    expect(json(answer).error?.message).toMatch(/^secret resolver: the signing secret is empty or missing/);
  });

  it('keys tenants without a name by their first secret: the same secret shares a key space, another does not', async () => {
    const keys: string[] = [];
    const inner = memoryStore();
    const store: IdempotencyStore = {
      claim: (key, token, leaseMs) => {
        keys.push(key);
        return inner.claim(key, token, leaseMs);
      },
      complete: (key, token, retentionMs) => inner.complete(key, token, retentionMs),
      release: (key, token) => inner.release(key, token),
      extend: (key, token, leaseMs) => inner.extend(key, token, leaseMs),
    };
    const receiver = createReceiver({ secret: ({ header }) => (header('x-tenant') === 'a' ? 'whsec_a' : 'whsec_b'), store });
    receiver.on('*', () => {});
    const body = envelope();
    await receiver.handle(signed(body, { secret: 'whsec_a', headers: { 'x-tenant': 'a' } }));
    await receiver.handle(signed(body, { secret: 'whsec_a', headers: { 'x-tenant': 'a' } }));
    await receiver.handle(signed(body, { secret: 'whsec_b', headers: { 'x-tenant': 'b' } }));
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).not.toBe(keys[0]);
    for (const key of keys) expect(key).toMatch(new RegExp(`^hookline:secret:s[0-9a-z]+:${body.deliveryId}$`));
  });
});

describe('stores that answer outside the contract', () => {
  it('a claim answering nothing, or something JSON cannot write, is a store error naming what it answered', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const [answer, shown] of [
      [undefined, 'undefined'],
      [cyclic, '[object Object]'],
      [{ state: 'granted' }, '{"state":"granted"}'],
    ] as const) {
      const store: IdempotencyStore = { ...memoryStore(), claim: () => answer as unknown as ClaimResult };
      const receiver = createReceiver({ secret: SECRET, store });
      const reports: [string, ErrorInfo][] = [];
      receiver.onError((error, info) => {
        reports.push([(error as Error).message, info]);
      });
      receiver.on('*', () => {});
      const body = envelope();
      expect((await receiver.handle(signed(body))).status).toBe(503);
      expect(reports).toEqual([
        [
          `hookline: the store's claim answered ${shown}; a store must answer { state: 'acquired' | 'in_progress' | 'completed' } (see the store conformance suite, @hookline/testing/conformance)`,
          { phase: 'store', delivery: body },
        ],
      ]);
    }
  });

  it('a claim that is acquired after its time limit is released at once, and a failing release is reported', async () => {
    const inner = memoryStore();
    let answerClaim!: () => void;
    const releaseFailure = new Error('release failed');
    const store: IdempotencyStore = {
      claim: (key, token, leaseMs) =>
        new Promise<ClaimResult>((resolve) => {
          answerClaim = () => resolve(inner.claim(key, token, leaseMs));
        }),
      complete: () => true,
      release: () => Promise.reject(releaseFailure),
      extend: () => true,
    };
    const receiver = createReceiver({ secret: SECRET, store, storeTimeoutMs: 20 });
    const reports: [unknown, ErrorInfo][] = [];
    receiver.onError((error, info) => {
      reports.push([error, info]);
    });
    receiver.on('*', () => {});
    const body = envelope();
    expect(json(await receiver.handle(signed(body))).error?.details).toEqual({ reason: 'store_timeout' });
    expect(json(await receiver.handle(signed(envelope()))).error?.message).toBe(
      'The idempotency store did not answer in time (storeTimeoutMs); the delivery was not processed and the service will retry.',
    );
    answerClaim();
    await tick(5);
    expect(reports.map(([error, info]) => [error, info.phase])).toContainEqual([releaseFailure, 'store']);
  });

  it('a store call that answers after its time limit causes no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const inner = memoryStore();
      const store: IdempotencyStore = {
        claim: (key, token, leaseMs) => inner.claim(key, token, leaseMs),
        complete: (key, token, retentionMs) => tick(60).then(() => inner.complete(key, token, retentionMs)),
        release: (key, token) => inner.release(key, token),
        extend: (key, token, leaseMs) => inner.extend(key, token, leaseMs),
      };
      const receiver = createReceiver({ secret: SECRET, store, storeTimeoutMs: 20 });
      receiver.onError(() => {});
      receiver.on('*', () => {});
      expect((await receiver.handle(signed(envelope()))).status).toBe(200);
      await tick(100);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a store data error is answered 500 with its message', async () => {
    const store: IdempotencyStore = { ...memoryStore(), claim: () => Promise.reject(new StoreDataError('lone surrogate')) };
    const receiver = createReceiver({ secret: SECRET, store });
    receiver.onError(() => {});
    receiver.on('*', () => {});
    expect(json(await receiver.handle(signed(envelope()))).error?.message).toBe(
      "The idempotency store refused this delivery's key; the delivery was not processed.",
    );
  });
});

describe('store operations on hookline:store', () => {
  it('name the release of a failed delivery, and time every operation in milliseconds', async () => {
    const messages: StoreOperationMessage[] = [];
    const listener = (message: unknown) => messages.push(message as StoreOperationMessage);
    diagnostics.subscribe(STORE_CHANNEL, listener);
    try {
      const store = memoryStore();
      const slow: IdempotencyStore = {
        claim: (key, token, leaseMs) => tick(20).then(() => store.claim(key, token, leaseMs)),
        complete: (key, token, retentionMs) => store.complete(key, token, retentionMs),
        release: (key, token) => tick(20).then(() => store.release(key, token)),
        extend: (key, token, leaseMs) => store.extend(key, token, leaseMs),
      };
      const receiver = createReceiver({ secret: SECRET, store: slow });
      receiver.onError(() => {});
      receiver.on('*', () => {
        throw new Error('boom');
      });
      const body = envelope();
      await receiver.handle(signed(body));
      expect(messages.map((message) => [message.operation, message.deliveryId])).toEqual([
        ['claim', body.deliveryId],
        ['release', body.deliveryId],
      ]);
      for (const message of messages) {
        expect(message.durationMs).toBeGreaterThanOrEqual(10);
        expect(message.durationMs).toBeLessThan(60_000);
      }
    } finally {
      diagnostics.unsubscribe(STORE_CHANNEL, listener);
    }
  });
});

describe('completions outlive the replay window of a delivery timestamped ahead of the clock', () => {
  it('are kept until its timestamp leaves the window (plus a minute), then forgotten', async () => {
    let now = Date.UTC(2026, 10, 23, 12);
    const store = memoryStore({ now: () => now });
    const receiver = createReceiver({ secret: SECRET, store, now: () => now });
    let runs = 0;
    receiver.on('*', () => {
      runs += 1;
    });
    const body = envelope({ timestamp: new Date(now + 5 * 60_000).toISOString() }); // 5 min ahead: the most allowed
    const input = signed(body);
    await receiver.handle(input);
    const receivedAt = now;
    now = receivedAt + 72 * 3_600_000 + 4 * 60_000 + 59_000; // still inside the window
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
    expect(runs).toBe(1);
    now = receivedAt + 72 * 3_600_000 + 6 * 60_000 + 1_000; // window left a minute ago: the record is gone
    expect(store.claim(`hookline:${body.deliveryId}`, 'probe', 1_000)).toEqual({ state: 'acquired', attempt: 1 });
  });
});

describe('parseEnvelope: deliveryId characters at the edges of each refused range', () => {
  const issueOf = (deliveryId: string) => {
    try {
      parseEnvelope(Buffer.from(JSON.stringify(envelope({ deliveryId }))));
      return undefined;
    } catch (error) {
      return (error as HooklineError).details?.issue;
    }
  };

  it('accepts a space, U+00A0 and other printable characters beside non-ASCII text', () => {
    expect(issueOf('wdl_é x')).toBeUndefined();
    expect(issueOf('wdl_é\u00a0x')).toBeUndefined();
    expect(issueOf('wdl_é\u007ex')).toBeUndefined();
    expect(issueOf('wdl_é\ud7ffx')).toBeUndefined();
    expect(issueOf('wdl_é\ue000x')).toBeUndefined();
  });

  it('refuses control characters: below U+0020, U+007F and U+0080 to U+009F', () => {
    for (const c of ['\u001f', '\u007f', '\u0080', '\u009f']) expect(issueOf(`wdl_é${c}x`), c).toBe('control_character');
    expect(issueOf('wdl_\u007f')).toBe('control_character');
  });

  it('accepts well-formed pairs at the edges of the surrogate ranges and refuses lone surrogates', () => {
    for (const pair of ['\ud800\udc00', '\udbff\udfff', '\ud800\udfff', '\udbff\udc00'])
      expect(issueOf(`wdl_${pair}`), pair).toBeUndefined();
    for (const lone of ['\ud800', '\udbff', '\udc00', '\udfff', '\ud800x', '\udbff\ud800']) {
      expect(issueOf(`wdl_${lone}`), lone).toBe('not_well_formed');
    }
  });

  it('gives each refusal its message', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    const messageOf = async (body: string | Record<string, unknown>) => json(await receiver.handle(signed(body))).error?.message;
    expect(await messageOf(Buffer.from([0xff, 0xfe]).toString('latin1'))).toBe('The body is not valid JSON.');
    expect(json(await receiver.handle(signed(Buffer.from([0x7b, 0xff, 0x7d])))).error?.message).toBe('The body is not valid UTF-8.');
    expect(await messageOf('[]')).toBe('The body must be a JSON object with event, deliveryId, timestamp and data.');
    expect(await messageOf(envelope({ event: '' }))).toBe('event must be a non-empty string naming the event.');
    expect(await messageOf(envelope({ deliveryId: 'abc' }))).toBe('deliveryId must be a string beginning with "wdl_".');
    expect(await messageOf(envelope({ deliveryId: 'wdl_\u0001' }))).toBe(
      'deliveryId must be well-formed Unicode without control characters, at most 256 characters.',
    );
    expect(await messageOf(envelope({ timestamp: 5 }))).toBe('timestamp must be an ISO 8601 string.');
    expect(await messageOf(envelope({ timestamp: `yesterday${'!'.repeat(60)}` }))).toBe(
      `timestamp "yesterday${'!'.repeat(31)}" is not an ISO 8601 date-time.`,
    );
    expect(await messageOf(envelope({ data: [] }))).toBe('data must be a JSON object.');
  });
});

describe('failed and slow store operations on hookline:store', () => {
  function listen() {
    const messages: StoreOperationMessage[] = [];
    const listener = (message: unknown) => messages.push(message as StoreOperationMessage);
    diagnostics.subscribe(STORE_CHANNEL, listener);
    return { messages, stop: () => diagnostics.unsubscribe(STORE_CHANNEL, listener) };
  }

  it('carry the error of a claim that rejected, timed out, or an extend that threw', async () => {
    const { messages, stop } = listen();
    try {
      const refused = new Error('ECONNREFUSED');
      const rejecting = createReceiver({ secret: SECRET, store: { ...memoryStore(), claim: () => Promise.reject(refused) } });
      rejecting.onError(() => {});
      rejecting.on('*', () => {});
      await rejecting.handle(signed(envelope()));
      const hanging = createReceiver({
        secret: SECRET,
        storeTimeoutMs: 20,
        store: { ...memoryStore(), claim: () => new Promise(() => {}) },
      });
      hanging.onError(() => {});
      hanging.on('*', () => {});
      await hanging.handle(signed(envelope()));
      const inner = memoryStore();
      const broken = new Error('extend broke');
      const throwing = createReceiver({
        secret: SECRET,
        leaseMs: 60,
        store: {
          claim: (key, token, leaseMs) => inner.claim(key, token, leaseMs),
          complete: (key, token, retentionMs) => inner.complete(key, token, retentionMs),
          release: (key, token) => inner.release(key, token),
          extend: () => {
            throw broken;
          },
        },
      });
      throwing.onError(() => {});
      throwing.on('*', () => tick(60));
      await throwing.handle(signed(envelope()));
      const failures = messages.filter((message) => message.error !== undefined);
      const seen = failures.map((message) => [message.operation, (message.error as Error).name, (message.error as Error).message]);
      // The heartbeat beats every 20 ms: one failed extend or more, each reported.
      expect(seen.slice(0, 3)).toEqual([
        ['claim', 'Error', 'ECONNREFUSED'],
        ['claim', 'StoreTimeoutError', "hookline: the store's claim did not answer within 20 ms (storeTimeoutMs)"],
        ['extend', 'Error', 'extend broke'],
      ]);
      expect(new Set(seen.slice(2).map((entry) => entry.join(' ')))).toEqual(new Set(['extend Error extend broke']));
    } finally {
      stop();
    }
  });

  it('time each operation within the time the delivery took', async () => {
    const { messages, stop } = listen();
    try {
      const inner = memoryStore();
      const store: IdempotencyStore = {
        claim: (key, token, leaseMs) => tick(5).then(() => inner.claim(key, token, leaseMs)),
        complete: (key, token, retentionMs) => tick(5).then(() => inner.complete(key, token, retentionMs)),
        release: (key, token) => inner.release(key, token),
        extend: (key, token, leaseMs) => inner.extend(key, token, leaseMs),
      };
      const receiver = createReceiver({ secret: SECRET, store });
      receiver.on('*', () => {});
      const startedAt = performance.now();
      await receiver.handle(signed(envelope()));
      const elapsed = performance.now() - startedAt;
      expect(messages.map((message) => message.operation)).toEqual(['claim', 'complete']);
      for (const message of messages) {
        expect(message.durationMs).toBeGreaterThan(0);
        expect(message.durationMs).toBeLessThanOrEqual(elapsed);
      }
    } finally {
      stop();
    }
  });
});

describe('refusals as the logger and the rejected hook see them', () => {
  it('name the event and deliveryId of a 409, and leave errors that are not refusals to onError', async () => {
    const warnings: object[] = [];
    const rejected: unknown[] = [];
    const receiver = createReceiver({
      secret: SECRET,
      logger: { info: () => {}, warn: (fields) => warnings.push(fields), error: () => {} },
      hooks: { rejected: (info) => rejected.push(info) },
    });
    let finish!: () => void;
    receiver.on('*', () => new Promise<void>((resolve) => (finish = resolve)));
    const body = envelope();
    const first = receiver.handle(signed(body));
    await tick(5);
    await receiver.handle(signed(body));
    finish();
    await first;
    expect(warnings).toEqual([
      {
        status: 409,
        code: 'CONFLICT',
        details: { reason: 'in_progress', retryAfterSeconds: 30 },
        event: body.event,
        deliveryId: body.deliveryId,
      },
    ]);
    expect(rejected).toHaveLength(1);
    receiver.answerError(new Error('a bug of ours'));
    expect(rejected).toHaveLength(1);
    expect(warnings).toHaveLength(1);
  });
});

describe('createReceiver hooks option', () => {
  it('skips hooks given as undefined, and hook() lists the known names for an unknown one', async () => {
    const receiver = createReceiver({ secret: SECRET, hooks: { received: undefined, handled: undefined } });
    const reports: unknown[] = [];
    receiver.onError((error) => reports.push(error));
    receiver.on('*', () => {});
    expect((await receiver.handle(signed(envelope()))).status).toBe(200);
    expect(reports).toEqual([]);
    expect(() => (receiver.hook as (name: string, listener: () => void) => unknown)('arrived', () => {})).toThrow(
      'receiver.hook("arrived"): unknown hook; use one of received, duplicate, handled, failed, stale, unhandled, rejected.',
    );
  });
});
