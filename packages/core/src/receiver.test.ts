import { describe, expect, it, vi } from 'vitest';
import type { HandlerContext } from './context';
import { PermanentFailure } from './errors';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import type { IdempotencyStore } from './store';
import { SECRET, deliveryId, envelope, hmacHex, json, signed, tick } from './test-support';

const quiet = () => {}; // onError listener for tests that expect handler errors

describe('answers 200', () => {
  it('runs the handler with the typed delivery and answers {"ok":true}', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const seen: string[] = [];
    receiver.on('message.delivered', (delivery) => {
      seen.push(delivery.data.messageId);
    });
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(json(answer)).toEqual({ ok: true });
    expect(seen).toEqual(['msg_1']);
  });

  it('answers a completed delivery again with duplicate: true and does not re-run handlers', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const handler = vi.fn();
    receiver.on('message.delivered', handler);
    const input = signed(envelope());
    expect((await receiver.handle(input)).status).toBe(200);
    const again = await receiver.handle(input);
    expect(again.status).toBe(200);
    expect(json(again)).toEqual({ ok: true, duplicate: true });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('runs the handler exactly once for 200 concurrent copies', async () => {
    const receiver = createReceiver({ secret: SECRET });
    let runs = 0;
    receiver.on('message.delivered', async () => {
      runs += 1;
      await tick(20);
    });
    const input = signed(envelope());
    const answers = await Promise.all(Array.from({ length: 200 }, () => receiver.handle(input)));
    expect(runs).toBe(1);
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(199);
    expect((await receiver.handle(input)).status).toBe(200);
    expect(runs).toBe(1);
  });

  it('answers an event nobody handles with 200 unhandled and fires the hook', async () => {
    const unhandled = vi.fn();
    const receiver = createReceiver({ secret: SECRET, hooks: { unhandled } });
    receiver.on('call.completed', () => {});
    const answer = await receiver.handle(signed(envelope({ event: 'message.read' })));
    expect(answer.status).toBe(200);
    expect(json(answer)).toEqual({ ok: true, unhandled: true });
    expect(unhandled).toHaveBeenCalledTimes(1);
  });

  it('answers an event the catalogue does not know with 200 and hands it to "*"', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const events: string[] = [];
    receiver.on('*', (delivery) => {
      events.push(delivery.event);
    });
    const answer = await receiver.handle(signed(envelope({ event: 'voicemail.transcribed', data: { text: 'hi' } })));
    expect(answer.status).toBe(200);
    expect(json(answer)).toEqual({ ok: true });
    expect(events).toEqual(['voicemail.transcribed']);
  });

  it('answers PermanentFailure with 200 failed: true, fires `failed` and does not retry', async () => {
    const failed = vi.fn();
    const receiver = createReceiver({ secret: SECRET, hooks: { failed } });
    receiver.on('message.delivered', () => {
      throw new PermanentFailure('unknown message');
    });
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(200);
    expect(json(answer)).toEqual({ ok: true, failed: true });
    expect(failed).toHaveBeenCalledWith(expect.objectContaining({ permanent: true, error: expect.any(PermanentFailure) }));
  });
});

describe('answers 400 VALIDATION_ERROR', () => {
  const receiver = createReceiver({ secret: SECRET, logger: false }).onError(quiet);
  receiver.on('*', () => {});

  const cases: [string, Record<string, unknown> | string, string, string][] = [
    ['invalid JSON', '{"event":', 'body', 'invalid_json'],
    ['JSON that is not an object', '[1,2,3]', 'body', 'not_an_object'],
    ['JSON null', 'null', 'body', 'not_an_object'],
    ['a missing event', envelope({ event: undefined }), 'event', 'missing'],
    ['an empty event', envelope({ event: '' }), 'event', 'must_be_non_empty_string'],
    ['a numeric event', envelope({ event: 7 }), 'event', 'must_be_non_empty_string'],
    ['a missing deliveryId', envelope({ deliveryId: undefined }), 'deliveryId', 'missing'],
    ['a deliveryId without wdl_', envelope({ deliveryId: 'abc_123' }), 'deliveryId', 'must_start_with_wdl_'],
    ['a bare wdl_ deliveryId', envelope({ deliveryId: 'wdl_' }), 'deliveryId', 'must_start_with_wdl_'],
    ['a numeric deliveryId', envelope({ deliveryId: 12 }), 'deliveryId', 'must_start_with_wdl_'],
    ['a missing timestamp', envelope({ timestamp: undefined }), 'timestamp', 'missing'],
    ['a non-ISO timestamp', envelope({ timestamp: 'yesterday' }), 'timestamp', 'must_be_iso_8601'],
    ['a numeric timestamp', envelope({ timestamp: 1_700_000_000_000 }), 'timestamp', 'must_be_iso_8601'],
    ['a timestamp without zone', envelope({ timestamp: '2026-11-22T10:00:00' }), 'timestamp', 'must_be_iso_8601'],
    ['a missing data', envelope({ data: undefined }), 'data', 'missing'],
    ['an array data', envelope({ data: [] }), 'data', 'must_be_object'],
    ['a string data', envelope({ data: 'x' }), 'data', 'must_be_object'],
    ['a null data', envelope({ data: null }), 'data', 'must_be_object'],
  ];

  for (const [name, body, field, issue] of cases) {
    it(`refuses ${name} (details.field = ${field})`, async () => {
      const answer = await receiver.handle(signed(typeof body === 'string' ? body : JSON.stringify(body)));
      expect(answer.status).toBe(400);
      expect(json(answer).error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field, issue } });
      expect(json(answer).error?.message).toEqual(expect.any(String));
    });
  }

  it('refuses a body that is not UTF-8', async () => {
    const answer = await receiver.handle(signed(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])));
    expect(answer.status).toBe(400);
    expect(json(answer).error?.details).toEqual({ field: 'body', issue: 'not_utf8' });
  });

  it('refuses an x-service-event header that disagrees with the body', async () => {
    const answer = await receiver.handle(signed(envelope(), { headers: { 'x-service-event': 'message.read' } }));
    expect(answer.status).toBe(400);
    expect(json(answer).error?.details).toEqual({ field: 'x-service-event', issue: 'does_not_match_body' });
  });

  it('refuses an x-service-delivery-id header that disagrees with the body', async () => {
    const answer = await receiver.handle(signed(envelope(), { headers: { 'x-service-delivery-id': 'wdl_other' } }));
    expect(answer.status).toBe(400);
    expect(json(answer).error?.details).toEqual({ field: 'x-service-delivery-id', issue: 'does_not_match_body' });
  });

  it('accepts a delivery without the unsigned x-service-* headers (the body is what is signed)', async () => {
    const answer = await receiver.handle(
      signed(envelope(), { headers: { 'x-service-event': undefined, 'x-service-delivery-id': undefined } }),
    );
    expect(answer.status).toBe(200);
  });

  it('refuses a timestamp older than maxAgeMs and one too far in the future', async () => {
    const now = Date.parse('2026-11-22T12:00:00.000Z');
    const strict = createReceiver({ secret: SECRET, now: () => now, retentionMs: 40 * 3_600_000, maxAgeMs: 36 * 3_600_000, logger: false });
    strict.on('*', () => {});
    const old = await strict.handle(signed(envelope({ timestamp: new Date(now - 36 * 3_600_000 - 1).toISOString() })));
    expect(old.status).toBe(400);
    expect(json(old).error?.details).toEqual({ field: 'timestamp', issue: 'too_old' });
    const edge = await strict.handle(signed(envelope({ timestamp: new Date(now - 36 * 3_600_000 + 1000).toISOString() })));
    expect(edge.status).toBe(200);
    const future = await strict.handle(signed(envelope({ timestamp: new Date(now + 5 * 60_000 + 1000).toISOString() })));
    expect(future.status).toBe(400);
    expect(json(future).error?.details).toEqual({ field: 'timestamp', issue: 'in_future' });
  });

  it('accepts extra top-level and data fields the document does not list', async () => {
    const answer = await receiver.handle(signed(envelope({ apiVersion: 2, data: { messageId: 'msg_1', novel: { nested: true } } })));
    expect(answer.status).toBe(200);
  });
});

describe('answers 401 INVALID_SIGNATURE and runs nothing', () => {
  const handler = vi.fn();
  const receiver = createReceiver({ secret: SECRET, logger: false });
  receiver.on('*', handler);

  it.each([
    ['absent', { 'x-service-signature': undefined }, 'missing'],
    ['empty', { 'x-service-signature': '' }, 'missing'],
    ['not hex', { 'x-service-signature': 'z'.repeat(64) }, 'malformed'],
    ['upper-case hex', { 'x-service-signature': hmacHex(JSON.stringify(envelope())).toUpperCase() }, 'malformed'],
    ['for another body', { 'x-service-signature': hmacHex('other') }, 'mismatch'],
    ['made with another secret', { 'x-service-signature': undefined, secret: 'whsec_wrong' }, 'mismatch'],
  ])('signature %s', async (_name, headers, issue) => {
    const { secret, ...rest } = headers as Record<string, string | undefined>;
    const answer = await receiver.handle(signed(envelope(), { headers: secret ? {} : rest, secret }));
    expect(answer.status).toBe(401);
    expect(json(answer).error).toMatchObject({ code: 'INVALID_SIGNATURE', details: { field: 'x-service-signature', issue } });
    expect(handler).not.toHaveBeenCalled();
  });

  it('refuses a tampered body', async () => {
    const input = signed(envelope());
    const tampered = Buffer.from(input.body);
    tampered[tampered.length - 3] = 0x20;
    const answer = await receiver.handle({ ...input, body: tampered });
    expect(answer.status).toBe(401);
    expect(handler).not.toHaveBeenCalled();
  });

  it('checks the signature before parsing: invalid JSON with a bad signature is 401, not 400', async () => {
    const answer = await receiver.handle({ body: Buffer.from('{nope'), headers: { 'x-service-signature': hmacHex('x') } });
    expect(answer.status).toBe(401);
  });
});

describe('secrets', () => {
  it('accepts any secret of a rotation list and tells the handler which matched', async () => {
    const receiver = createReceiver({ secret: ['whsec_new', SECRET] });
    let index = -1;
    receiver.on('*', (_delivery, context) => {
      index = context.secretIndex;
    });
    expect((await receiver.handle(signed(envelope()))).status).toBe(200);
    expect(index).toBe(1);
  });

  it('resolves a per-tenant secret from the request, and answers 401 for an unknown tenant', async () => {
    const secrets: Record<string, string> = { acme: 'whsec_acme', globex: 'whsec_globex' };
    const receiver = createReceiver({
      secret: async ({ header, url }) => secrets[header('x-tenant') ?? url?.split('/').pop() ?? ''],
      logger: false,
    });
    receiver.on('*', () => {});
    const acme = await receiver.handle(signed(envelope(), { secret: 'whsec_acme', headers: { 'x-tenant': 'acme' } }));
    expect(acme.status).toBe(200);
    const byUrl = await receiver.handle({ ...signed(envelope(), { secret: 'whsec_globex' }), url: '/webhooks/globex' });
    expect(byUrl.status).toBe(200);
    const crossed = await receiver.handle(signed(envelope(), { secret: 'whsec_acme', headers: { 'x-tenant': 'globex' } }));
    expect(crossed.status).toBe(401);
    const unknown = await receiver.handle(signed(envelope(), { headers: { 'x-tenant': 'initech' } }));
    expect(unknown.status).toBe(401);
    expect(json(unknown).error?.details).toEqual({ field: 'x-service-signature', issue: 'no_secret' });
  });
});

describe('answers 409 CONFLICT for an in-flight duplicate', () => {
  it('with Retry-After while another attempt holds the lease', async () => {
    const receiver = createReceiver({ secret: SECRET, leaseMs: 30_000 });
    let release!: () => void;
    receiver.on('*', () => new Promise<void>((resolve) => (release = resolve)));
    const input = signed(envelope());
    const first = receiver.handle(input);
    await tick();
    const second = await receiver.handle(input);
    expect(second.status).toBe(409);
    expect(second.headers['retry-after']).toBe('30');
    expect(json(second).error).toMatchObject({ code: 'CONFLICT', details: { reason: 'in_progress', retryAfterSeconds: 30 } });
    release();
    expect((await first).status).toBe(200);
  });
});

describe('answers 413 PAYLOAD_TOO_LARGE', () => {
  it('for a body over maxBodyBytes, before verifying it', async () => {
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 100, logger: false });
    const answer = await receiver.handle(signed(envelope({ data: { text: 'x'.repeat(200) } })));
    expect(answer.status).toBe(413);
    expect(json(answer).error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit: 100 } });
  });
});

describe('answers 500 INTERNAL_ERROR when a handler throws', () => {
  it('releases the record so the next attempt runs it, with attempt counted by the store', async () => {
    const errors: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET }).onError((error) => errors.push(error));
    const attempts: number[] = [];
    receiver.on('message.delivered', (_delivery, context) => {
      attempts.push(context.attempt);
      if (context.attempt === 1) throw new Error('database down');
    });
    const input = signed(envelope());
    const first = await receiver.handle(input);
    expect(first.status).toBe(500);
    expect(json(first).error).toMatchObject({ code: 'INTERNAL_ERROR' });
    expect(json(first).error?.message).not.toContain('database down'); // handler errors are not leaked to the sender
    expect(errors).toHaveLength(1);
    const second = await receiver.handle(input);
    expect(second.status).toBe(200);
    expect(attempts).toEqual([1, 2]);
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
  });

  it('treats a rejected promise like a throw', async () => {
    const receiver = createReceiver({ secret: SECRET }).onError(quiet);
    receiver.on('*', async () => Promise.reject(new Error('nope')));
    expect((await receiver.handle(signed(envelope()))).status).toBe(500);
  });
});

describe('answers 503 SERVICE_UNAVAILABLE', () => {
  const broken = (): IdempotencyStore => ({
    claim: async () => {
      throw new Error('ECONNREFUSED');
    },
    complete: async () => true,
    release: async () => true,
    extend: async () => true,
  });

  it('when the store cannot claim: fails closed, no handler runs', async () => {
    const errors: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET, store: broken() }).onError((error) => errors.push(error));
    const handler = vi.fn();
    receiver.on('*', handler);
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(503);
    expect(json(answer).error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'store_unavailable' } });
    expect(handler).not.toHaveBeenCalled();
    expect(errors).toHaveLength(1);
  });

  it('at the deadline; the handler goes on and its completion makes the next attempt a duplicate', async () => {
    const receiver = createReceiver({ secret: SECRET, deadlineMs: 30 });
    let finish!: () => void;
    let signal: AbortSignal | undefined;
    let runs = 0;
    receiver.on('*', (_delivery, context: HandlerContext) => {
      runs += 1;
      signal = context.signal;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    const input = signed(envelope());
    const answer = await receiver.handle(input);
    expect(answer.status).toBe(503);
    expect(json(answer).error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'deadline' } });
    expect(signal?.aborted).toBe(true);
    expect((await receiver.handle(input)).status).toBe(409); // still running, lease held
    finish();
    await tick(5);
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
    expect(runs).toBe(1);
  });

  it('still answers 200 when complete() fails after the handler succeeded, and reports it', async () => {
    const store = memoryStore();
    const errors: unknown[] = [];
    const receiver = createReceiver({
      secret: SECRET,
      store: { ...store, claim: store.claim, complete: async () => Promise.reject(new Error('write failed')) },
    }).onError((error) => errors.push(error));
    receiver.on('*', () => {});
    expect((await receiver.handle(signed(envelope()))).status).toBe(200);
    expect(errors).toEqual([expect.objectContaining({ message: 'write failed' })]);
  });
});

describe('leases', () => {
  it('an expired lease (a crashed attempt) is taken over and attempt goes up; the stale owner cannot complete', async () => {
    let now = 1_000_000;
    const store = memoryStore({ now: () => now });
    const errors: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET, store, leaseMs: 1_000, deadlineMs: 20 }).onError((error) => errors.push(error));
    const attempts: number[] = [];
    let hang = true;
    let finishFirst!: () => void;
    receiver.on('*', (_delivery, context) => {
      attempts.push(context.attempt);
      if (hang) {
        hang = false;
        return new Promise<void>((resolve) => (finishFirst = resolve));
      }
    });
    const input = signed(envelope());
    expect((await receiver.handle(input)).status).toBe(503);
    now += 1_001; // the first attempt's lease lapses (as if its process died)
    expect((await receiver.handle(input)).status).toBe(200);
    expect(attempts).toEqual([1, 2]);
    finishFirst();
    await tick(5);
    expect(errors).toEqual([expect.objectContaining({ message: expect.stringContaining('lease') })]);
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
  });

  it("heartbeats keep a long handler's lease alive past leaseMs", async () => {
    const receiver = createReceiver({ secret: SECRET, leaseMs: 60, deadlineMs: 20 });
    let finish!: () => void;
    receiver.on('*', () => new Promise<void>((resolve) => (finish = resolve)));
    const input = signed(envelope());
    expect((await receiver.handle(input)).status).toBe(503);
    await tick(150); // > 2 leases; heartbeats every 20 ms renew it
    expect((await receiver.handle(input)).status).toBe(409);
    finish();
    await tick(5);
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
  });
});

describe('dispatch', () => {
  it('runs every matching handler: exact, array, group wildcard and "*", each once, in registration order', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const order: string[] = [];
    const shared = () => {
      order.push('shared');
    };
    receiver.on('*', () => {
      order.push('*');
    });
    receiver.on('message.delivered', () => {
      order.push('exact');
    });
    receiver.on(['message.read', 'message.delivered'], () => {
      order.push('array');
    });
    receiver.on('message.*', () => {
      order.push('group');
    });
    receiver.on('call.*', () => {
      order.push('other group');
    });
    // One registration whose patterns overlap runs once; a second registration of it runs again.
    receiver.on(['message.delivered', 'message.*'], shared);
    await receiver.handle(signed(envelope()));
    expect(order).toEqual(['*', 'exact', 'array', 'group', 'shared']);
  });

  it('refuses patterns that are not an event, a group wildcard or "*"', () => {
    const receiver = createReceiver({ secret: SECRET });
    expect(() => receiver.on('message*' as never, () => {})).toThrow(/wildcards/);
    expect(() => receiver.on('*.delivered' as never, () => {})).toThrow(/wildcards/);
    expect(() => receiver.on('' as never, () => {})).toThrow(/non-empty/);
    expect(() => receiver.on([] as never, () => {})).toThrow();
    expect(() => receiver.on('message.read', 'nope' as never)).toThrow(/function/);
  });

  it('gives handlers the headers, receivedAt and attempt', async () => {
    const at = Date.parse('2026-11-22T12:00:00.000Z');
    const receiver = createReceiver({ secret: SECRET, now: () => at });
    let context: HandlerContext | undefined;
    receiver.on('*', (_delivery, ctx) => {
      context = ctx;
    });
    await receiver.handle(signed(envelope({ timestamp: '2026-11-22T11:59:59.000Z' }), { headers: { 'x-trace': 'abc' } }));
    expect(context?.header('x-trace')).toBe('abc');
    expect(context?.receivedAt.toISOString()).toBe('2026-11-22T12:00:00.000Z');
    expect(context?.attempt).toBe(1);
    expect(context?.signal.aborted).toBe(false);
  });
});

describe('hooks', () => {
  it('fire for each outcome, and a throwing hook changes no answer', async () => {
    const calls: string[] = [];
    const errors: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET, logger: false }).onError((error, info) => errors.push([info.phase, error]));
    for (const name of ['received', 'duplicate', 'handled', 'failed', 'unhandled', 'rejected'] as const) {
      receiver.hook(name, (() => calls.push(name)) as never);
    }
    receiver.hook('handled', () => {
      throw new Error('metrics down');
    });
    receiver.on('message.delivered', () => {});
    const input = signed(envelope());
    expect((await receiver.handle(input)).status).toBe(200);
    expect((await receiver.handle(input)).status).toBe(200);
    expect((await receiver.handle(signed(envelope({ event: 'call.ringing' })))).status).toBe(200);
    expect((await receiver.handle({ ...input, headers: {} })).status).toBe(401);
    expect(calls).toEqual(['received', 'handled', 'received', 'duplicate', 'received', 'unhandled', 'rejected']);
    expect(errors).toEqual([['hook', expect.objectContaining({ message: 'metrics down' })]]);
  });

  it('refuses an unknown hook name', () => {
    expect(() => createReceiver({ secret: SECRET }).hook('finished' as never, (() => {}) as never)).toThrow(/unknown hook/);
  });

  it('writes errors to console.error when no onError listener is set', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    const receiver = createReceiver({ secret: SECRET });
    receiver.on('*', () => {
      throw new Error('boom');
    });
    await receiver.handle(signed(envelope()));
    expect(spy).toHaveBeenCalledWith(expect.stringContaining('[hookline] handler error'), expect.objectContaining({ message: 'boom' }));
    spy.mockRestore();
  });
});

describe('fetch', () => {
  const url = 'http://127.0.0.1/webhooks';

  it('serves a Web Request', async () => {
    const receiver = createReceiver({ secret: SECRET });
    receiver.on('*', () => {});
    const input = signed(envelope());
    const response = await receiver.fetch(
      new Request(url, { method: 'POST', body: input.body as Uint8Array<ArrayBuffer>, headers: input.headers as Record<string, string> }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ ok: true });
  });

  it('answers 405 with Allow: POST to other methods', async () => {
    const response = await createReceiver({ secret: SECRET, logger: false }).fetch(new Request(url));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect((await response.json()).error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('answers 413 to a streamed body over the limit without a Content-Length', async () => {
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 1024, logger: false });
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(512));
        if (pulled > 100) controller.close();
      },
    });
    const response = await receiver.fetch(new Request(url, { method: 'POST', body, duplex: 'half' } as RequestInit));
    expect(response.status).toBe(413);
    expect(pulled).toBeLessThan(10); // stopped reading early instead of buffering 50 KB
  });

  it('answers 413 at once to a declared Content-Length over the limit', async () => {
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 10, logger: false });
    const response = await receiver.fetch(new Request(url, { method: 'POST', body: 'x'.repeat(11) }));
    expect(response.status).toBe(413);
  });

  it('answers 500 CONFIGURATION_ERROR when the body was already read', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    const request = new Request(url, { method: 'POST', body: '{}' });
    await request.text();
    const response = await receiver.fetch(request);
    expect(response.status).toBe(500);
    expect((await response.json()).error.code).toBe('CONFIGURATION_ERROR');
  });
});

describe('createReceiver options', () => {
  it('builds without the secret (a build step has none) and answers every delivery 500 CONFIGURATION_ERROR with advice', async () => {
    for (const secret of ['', undefined, ['ok', '']]) {
      const errors: unknown[] = [];
      const receiver = createReceiver({ secret }).onError((error) => errors.push(error));
      const handler = vi.fn();
      receiver.on('*', handler);
      const answer = await receiver.handle(signed(envelope()));
      expect(answer.status).toBe(500);
      expect(json(answer).error).toMatchObject({ code: 'CONFIGURATION_ERROR', message: expect.stringMatching(/signingSecret/) });
      expect(handler).not.toHaveBeenCalled();
      expect(errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/signingSecret/) })]);
    }
  });

  it('refuses a retention under 32 h unless forced', () => {
    expect(() => createReceiver({ secret: SECRET, retentionMs: 24 * 3_600_000 })).toThrow(/31 h 13 min/);
    expect(() => createReceiver({ secret: SECRET, retentionMs: 24 * 3_600_000, allowShortRetention: true })).not.toThrow();
  });

  it('refuses maxAgeMs over retentionMs and a deadline the service would not wait for', () => {
    expect(() => createReceiver({ secret: SECRET, maxAgeMs: 73 * 3_600_000 })).toThrow(/maxAgeMs/);
    expect(() => createReceiver({ secret: SECRET, deadlineMs: 30_000 })).toThrow(/30 s/);
    expect(() => createReceiver({ secret: SECRET, leaseMs: 0 })).toThrow(/leaseMs/);
  });

  it('keys the store with the namespace', async () => {
    const store = memoryStore();
    const claim = vi.spyOn(store, 'claim');
    const receiver = createReceiver({ secret: SECRET, store, namespace: 'tenant-a:' });
    receiver.on('*', () => {});
    const id = deliveryId();
    await receiver.handle(signed(envelope({ deliveryId: id })));
    expect(claim).toHaveBeenCalledWith(`tenant-a:${id}`, expect.any(String), 30_000);
  });
});
