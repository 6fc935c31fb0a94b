// What each lifecycle hook and error report carries, field by field: dashboards and alerts read them.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PermanentFailure } from './errors';
import type { ErrorInfo } from './hooks';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import type { IdempotencyStore } from './store';
import { envelope, signed, SECRET } from './test-support';

afterEach(() => {
  vi.restoreAllMocks();
});

function delivery(overrides: Record<string, unknown> = {}) {
  const body = envelope(overrides);
  return { body, input: signed(body) };
}

describe('hook payloads', () => {
  it('received, handled and duplicate carry the delivery, the context and the duration', async () => {
    const seen: [string, unknown][] = [];
    const receiver = createReceiver({
      secret: [SECRET],
      hooks: {
        received: (info) => seen.push(['received', info]),
        handled: (info) => seen.push(['handled', info]),
        duplicate: (info) => seen.push(['duplicate', info]),
      },
    });
    receiver.on('message.delivered', () => {});
    const { body, input } = delivery();
    await receiver.handle(input);
    await receiver.handle(input);
    expect(seen).toEqual([
      ['received', { delivery: body }],
      [
        'handled',
        {
          delivery: body,
          context: expect.objectContaining({ attempt: 1, secretIndex: 0 }),
          durationMs: expect.any(Number),
        },
      ],
      ['received', { delivery: body }],
      ['duplicate', { delivery: body, state: 'completed' }],
    ]);
    const handled = seen[1]?.[1] as { durationMs: number; context: { receivedAt: Date } };
    expect(handled.durationMs).toBeGreaterThanOrEqual(0);
    expect(handled.durationMs).toBeLessThan(60_000);
    expect(handled.context.receivedAt).toBeInstanceOf(Date);
  });

  it('duplicate says in_progress for a copy of a delivery still running', async () => {
    const duplicates: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET, hooks: { duplicate: (info) => duplicates.push(info) } });
    let finish!: () => void;
    receiver.on('message.delivered', () => new Promise<void>((resolve) => (finish = resolve)));
    const { body, input } = delivery();
    const first = receiver.handle(input);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await receiver.handle(input)).status).toBe(409);
    finish();
    await first;
    expect(duplicates).toEqual([{ delivery: body, state: 'in_progress' }]);
  });

  it('failed carries the error and whether it was permanent', async () => {
    const failed: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET, hooks: { failed: (info) => failed.push(info) } });
    receiver.onError(() => {});
    const boom = new Error('boom');
    const permanent = new PermanentFailure('unknown message');
    receiver.on('message.delivered', () => {
      throw boom;
    });
    receiver.on('message.failed', () => {
      throw permanent;
    });
    const a = delivery();
    const b = delivery({ event: 'message.failed' });
    await receiver.handle(a.input);
    await receiver.handle(b.input);
    expect(failed).toEqual([
      { delivery: a.body, context: expect.objectContaining({ attempt: 1 }), error: boom, permanent: false },
      { delivery: b.body, context: expect.objectContaining({ attempt: 1 }), error: permanent, permanent: true },
    ]);
  });

  it('unhandled carries the delivery', async () => {
    const unhandled: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET, hooks: { unhandled: (info) => unhandled.push(info) } });
    const { body, input } = delivery({ event: 'line.ban_detected' });
    await receiver.handle(input);
    expect(unhandled).toEqual([{ delivery: body }]);
  });

  it('rejected carries the status, the code, the message and the details of each refusal', async () => {
    const rejected: unknown[] = [];
    const receiver = createReceiver({
      secret: SECRET,
      maxBodyBytes: 4_096,
      hooks: { rejected: (info) => rejected.push(info) },
      logger: false,
    });
    receiver.on('*', () => {});
    await receiver.handle({ ...signed(envelope()), headers: {} });
    await receiver.handle(signed(envelope(), { secret: 'whsec_other' }));
    await receiver.handle(signed('[]'));
    await receiver.handle(signed(envelope({ timestamp: '2020-01-01T00:00:00.000Z' })));
    await receiver.handle(signed(envelope(), { headers: { 'x-service-event': 'message.read' } }));
    await receiver.handle(signed('x'.repeat(5_000)));
    expect(rejected).toEqual([
      {
        status: 401,
        code: 'INVALID_SIGNATURE',
        message: 'The x-service-signature header is missing.',
        details: { field: 'x-service-signature', issue: 'missing' },
      },
      {
        status: 401,
        code: 'INVALID_SIGNATURE',
        message: expect.stringMatching(/does not match the body for any configured secret/),
        details: { field: 'x-service-signature', issue: 'mismatch' },
      },
      {
        status: 400,
        code: 'VALIDATION_ERROR',
        message: expect.stringMatching(/must be a JSON object/),
        details: { field: 'body', issue: 'not_an_object' },
      },
      {
        status: 400,
        code: 'VALIDATION_ERROR',
        message: expect.stringMatching(/older than the replay window/),
        details: { field: 'timestamp', issue: 'too_old' },
      },
      {
        status: 400,
        code: 'VALIDATION_ERROR',
        message: "The x-service-event header does not match the body's event.",
        details: { field: 'x-service-event', issue: 'does_not_match_body' },
      },
      {
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
        message: 'The body is larger than maxBodyBytes (4096 bytes).',
        details: { limit: 4_096 },
      },
    ]);
  });
});

describe('error reports', () => {
  it('give onError the error, the phase and the delivery of a failing handler', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const reports: [unknown, ErrorInfo][] = [];
    receiver.onError((error, info) => {
      reports.push([error, info]);
    });
    const boom = new Error('boom');
    receiver.on('message.delivered', () => {
      throw boom;
    });
    const { body, input } = delivery();
    await receiver.handle(input);
    expect(reports).toEqual([[boom, { phase: 'handler', delivery: body }]]);
  });

  it('write one console.error line naming the phase and the delivery when nobody listens', async () => {
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    const receiver = createReceiver({ secret: SECRET });
    const boom = new Error('boom');
    receiver.on('message.delivered', () => {
      throw boom;
    });
    const { body, input } = delivery();
    await receiver.handle(input);
    expect(consoleError.mock.calls).toEqual([[`[hookline] handler error (message.delivered ${body.deliveryId}):`, boom]]);
  });

  it("write a store's failure as one line (class, code, message), not the driver's whole error object", async () => {
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    // What pg throws for a missing table: its name says `error`, its class DatabaseError, and it carries
    // a dozen more fields that console.error would print with the stack.
    class DatabaseError extends Error {
      severity = 'ERROR';
      code = '42P01';
      position = '13';
      routine = 'parserOpenTable';
      constructor(message: string) {
        super(message);
        this.name = 'error';
      }
    }
    const refused = new AggregateError([new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')], '');
    Object.assign(refused, { code: 'ECONNREFUSED' });
    for (const failure of [new DatabaseError('relation "hookline.deliveries" does not exist'), refused]) {
      const receiver = createReceiver({ secret: SECRET, logger: false, store: { ...memoryStore(), claim: () => Promise.reject(failure) } });
      receiver.on('message.delivered', () => {});
      expect((await receiver.handle(delivery().input)).status).toBe(503);
    }
    expect(consoleError.mock.calls.map((call) => call.length)).toEqual([1, 1]);
    expect(consoleError.mock.calls.map(([line]) => String(line).replace(/wdl_\w+/, 'wdl_…'))).toEqual([
      '[hookline] store error (message.delivered wdl_…): DatabaseError [42P01]: relation "hookline.deliveries" does not exist',
      '[hookline] store error (message.delivered wdl_…): AggregateError [ECONNREFUSED]: connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432',
    ]);
  });

  it('go to the logger as one structured line, with the message of the error', async () => {
    const lines: [string, object, string | undefined][] = [];
    const log = (level: string) => (fields: object, message?: string) => lines.push([level, fields, message]);
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    const inner = memoryStore();
    const store: IdempotencyStore = { ...inner, claim: inner.claim, complete: () => false, release: inner.release, extend: inner.extend };
    const receiver = createReceiver({ secret: SECRET, store, logger: { info: log('info'), warn: log('warn'), error: log('error') } });
    receiver.on('message.delivered', () => {});
    const { body, input } = delivery();
    expect((await receiver.handle(input)).status).toBe(200);
    expect(lines).toEqual([
      [
        'error',
        { err: expect.any(Error), phase: 'store', event: 'message.delivered', deliveryId: body.deliveryId },
        `hookline: store error (message.delivered ${body.deliveryId}): hookline: the lease on ${body.deliveryId} was lost before the handlers finished (another attempt may have run them)`,
      ],
    ]);
    expect(consoleError).not.toHaveBeenCalled();
  });

  it('a listener that throws or rejects is written to console.error once, and the answer stands', async () => {
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    const receiver = createReceiver({ secret: SECRET });
    const thrown = new Error('listener threw');
    const rejectedWith = new Error('listener rejected');
    receiver.onError(() => {
      throw thrown;
    });
    receiver.onError(() => Promise.reject(rejectedWith));
    receiver.on('message.delivered', () => {
      throw new Error('boom');
    });
    expect((await receiver.handle(delivery().input)).status).toBe(500);
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The second failure of an onError listener is counted (summed up a minute later), not written.
    expect(consoleError.mock.calls).toEqual([
      [
        '[hookline] an onError listener threw: Error: listener threw. hookline went on without it: no answer and no delivery changed. Further failures of it are counted once a minute.',
      ],
    ]);
  });

  it('a hook that throws goes to onError with phase hook, and changes no answer', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const phases: string[] = [];
    receiver.onError((_error, info) => {
      phases.push(info.phase);
    });
    receiver.hook('received', () => {
      throw new Error('hook threw');
    });
    receiver.hook('handled', () => Promise.reject(new Error('hook rejected')));
    receiver.on('message.delivered', () => {});
    expect((await receiver.handle(delivery().input)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(phases).toEqual(['hook', 'hook']);
  });
});

describe('error reports without a delivery', () => {
  it('go to the logger with no event or deliveryId, and a synchronous onError listener writes nothing to the console', async () => {
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    const lines: [object, string | undefined][] = [];
    const receiver = createReceiver({
      secret: SECRET,
      logger: { info: () => {}, warn: () => {}, error: (fields, message) => lines.push([fields, message]) },
    });
    const phases: string[] = [];
    receiver.onError((_error, info) => {
      phases.push(info.phase);
    });
    receiver.hook('received', () => {
      throw new Error('hook threw');
    });
    receiver.on('message.delivered', () => {});
    expect((await receiver.handle(delivery().input)).status).toBe(200);
    expect(lines).toEqual([
      [{ err: expect.any(Error), phase: 'hook', event: undefined, deliveryId: undefined }, 'hookline: hook error: hook threw'],
    ]);
    expect(phases).toEqual(['hook']);
    expect(consoleError).not.toHaveBeenCalled();
  });

  it('are not made for deliveries every hook list is empty for', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    const reports: unknown[] = [];
    receiver.onError((error) => reports.push(error));
    receiver.on('message.delivered', () => {});
    await receiver.handle(delivery().input);
    await receiver.handle(delivery({ event: 'line.ban_detected' }).input);
    await receiver.handle(signed(envelope(), { secret: 'whsec_other' }));
    const input = delivery().input;
    await receiver.handle(input);
    await receiver.handle(input);
    expect(reports).toEqual([]);
  });
});

describe('error messages say what happened and what to do', () => {
  it('for a handler past maxRunMs, a deadline, a store down and a store that times out', async () => {
    const messages: string[] = [];
    const receiver = createReceiver({ secret: SECRET, deadlineMs: 50, maxRunMs: 100, leaseMs: 1_000 });
    receiver.onError((error) => {
      messages.push((error as Error).message);
    });
    let finish!: () => void;
    receiver.on('message.delivered', () => new Promise<void>((resolve) => (finish = resolve)));
    const { body, input } = delivery();
    const answer = await receiver.handle(input);
    expect(JSON.parse(answer.body)).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'The handlers did not finish within 50 ms; they are still running and the next attempt will see their outcome.',
        details: { reason: 'deadline' },
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    finish();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(messages[0]).toBe(
      `hookline: the handlers of ${body.deliveryId} ran past maxRunMs (100 ms); its lease is no longer renewed, so the next attempt may run it again`,
    );

    const down = createReceiver({
      secret: SECRET,
      storeTimeoutMs: 30,
      store: { ...memoryStore(), claim: () => Promise.reject(new Error('ECONNREFUSED')) },
    });
    down.onError(() => {});
    down.on('*', () => {});
    expect(JSON.parse((await down.handle(delivery().input)).body)).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'The idempotency store is unavailable; the delivery was not processed and the service will retry.',
        details: { reason: 'store_unavailable' },
      },
    });
    const hung = createReceiver({ secret: SECRET, storeTimeoutMs: 30, store: { ...memoryStore(), claim: () => new Promise(() => {}) } });
    const timeouts: string[] = [];
    hung.onError((error) => {
      timeouts.push((error as Error).message);
    });
    hung.on('*', () => {});
    expect(JSON.parse((await hung.handle(delivery().input)).body).error.details).toEqual({ reason: 'store_timeout' });
    expect(timeouts).toEqual(["hookline: the store's claim did not answer within 30 ms (storeTimeoutMs)"]);
  });

  it('for a handler that throws, naming the event', async () => {
    const receiver = createReceiver({ secret: SECRET });
    receiver.onError(() => {});
    receiver.on('message.delivered', () => {
      throw new Error('boom');
    });
    expect(JSON.parse((await receiver.handle(delivery().input)).body)).toEqual({
      error: {
        code: 'INTERNAL_ERROR',
        message: 'A handler for message.delivered threw; the delivery was not completed and the service will retry it.',
      },
    });
  });
});
