// The pipeline's seams: diagnostics_channel tracing, the logger, answer-fast (queue) mode, workers and
// the trusted entry they use.
import { AsyncLocalStorage } from 'node:async_hooks';
import diagnostics from 'node:diagnostics_channel';
import { describe, expect, it, vi } from 'vitest';
import type { DeliveryTrace } from './delivery-trace';
import { STORE_CHANNEL } from './diagnostics';
import { PermanentFailure } from './errors';
import { memoryStore } from './memory-store';
import type { DeliveryQueue, JobResult, QueuedDelivery, QueueJob } from './queue';
import { createReceiver } from './receiver';
import { SECRET, envelope, json, signed, tick, watchDeliveryTraces } from './test-support';

type Event = [name: string, outcome: string | undefined, status: number | undefined];

/** The delivery channel's events in the running test, as [event, outcome, status], in order. */
function traceEvents(onStart?: (trace: DeliveryTrace) => void) {
  const { seen } = watchDeliveryTraces(onStart);
  return {
    get events(): Event[] {
      return seen.map(([name, trace]) => [name, trace.outcome, trace.status]);
    },
  };
}

describe('the hookline:delivery tracing channel', () => {
  it('publishes start, end, asyncStart, asyncEnd in order for a synchronous delivery, with its outcome and status', async () => {
    const seen = traceEvents();
    const receiver = createReceiver({ secret: SECRET }).on('*', () => {});
    await receiver.handle(signed(envelope()));
    expect(seen.events).toEqual([
      ['start', undefined, undefined],
      ['end', undefined, undefined],
      ['asyncStart', 'handled', 200],
      ['asyncEnd', 'handled', 200],
    ]);
  });

  it('publishes end before the async handlers finish, then error for a thrown handler, then asyncStart/asyncEnd', async () => {
    const seen = traceEvents();
    const receiver = createReceiver({ secret: SECRET })
      .onError(() => {})
      .on('*', async () => {
        await tick(1);
        throw new Error('boom');
      });
    const pending = receiver.handle(signed(envelope()));
    expect(seen.events.map(([name]) => name)).toEqual(['start', 'end']);
    await pending;
    expect(seen.events.slice(2)).toEqual([
      ['error', 'failed', 500],
      ['asyncStart', 'failed', 500],
      ['asyncEnd', 'failed', 500],
    ]);
  });

  it('carries the event, deliveryId, claims, refusal code and reason, and the store timings', async () => {
    const traces: DeliveryTrace[] = [];
    traceEvents((trace) => traces.push(trace));
    const receiver = createReceiver({ secret: SECRET, logger: false }).on('*', () => {});
    const body = envelope();
    await receiver.handle(signed(body));
    await receiver.handle(signed(body, { secret: 'whsec_other' }));
    const [handled, refused] = traces;
    expect(handled).toMatchObject({ mode: 'receive', event: body.event, deliveryId: body.deliveryId, claims: 1, outcome: 'handled' });
    expect(handled?.storeMs.claim).toBeGreaterThanOrEqual(0);
    expect(handled?.storeMs.complete).toBeGreaterThanOrEqual(0);
    expect(refused).toMatchObject({ outcome: 'rejected', status: 401, code: 'INVALID_SIGNATURE', reason: 'mismatch' });
    expect(refused?.event).toBeUndefined();
  });

  it('runs the handlers inside the scope a subscriber set at start', async () => {
    const scopes: string[] = [];
    traceEvents((trace) => {
      trace.runInScope = (fn) => {
        scopes.push('enter');
        try {
          return fn();
        } finally {
          scopes.push('leave');
        }
      };
    });
    const receiver = createReceiver({ secret: SECRET }).on('*', () => {
      scopes.push('handler');
    });
    await receiver.handle(signed(envelope()));
    expect(scopes).toEqual(['enter', 'handler', 'leave']);
  });

  it('runs handlers registered with options (the guarded path) inside that scope too, across their awaits', async () => {
    // A tracer's scope is an async context (AsyncLocalStorage.run): the guarded path awaits its store
    // calls before the handler runs, and the handler must still see the delivery's span.
    const span = new AsyncLocalStorage<string>();
    traceEvents((trace) => {
      trace.runInScope = (fn) => span.run(`span:${trace.deliveryId}`, fn);
    });
    const spans: (string | undefined)[] = [];
    const receiver = createReceiver({ secret: SECRET, completion: 'handler' }).on(
      '*',
      () => {
        spans.push(span.getStore());
      },
      { name: 'audit' },
    );
    const body = envelope();
    expect((await receiver.handle(signed(body))).status).toBe(200);
    expect(spans).toEqual([`span:${body.deliveryId}`]);
  });

  it('traces adapter refusals made through answerError', () => {
    const seen = traceEvents();
    const receiver = createReceiver({ secret: SECRET });
    receiver.answerError(new (class extends Error {})('not ours'));
    expect(seen.events.map(([name]) => name)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
  });

  it('publishes every store operation on hookline:store', async () => {
    const messages: { operation: string; deliveryId: string }[] = [];
    const listener = (message: unknown) => messages.push(message as { operation: string; deliveryId: string });
    diagnostics.subscribe(STORE_CHANNEL, listener);
    try {
      const receiver = createReceiver({ secret: SECRET }).on('*', () => {});
      const body = envelope();
      await receiver.handle(signed(body));
      expect(messages.map((m) => [m.operation, m.deliveryId])).toEqual([
        ['claim', body.deliveryId],
        ['complete', body.deliveryId],
      ]);
    } finally {
      diagnostics.unsubscribe(STORE_CHANNEL, listener);
    }
  });
});

describe('logger', () => {
  it('writes one structured line per refusal and failure, and nothing to the console', async () => {
    const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const receiver = createReceiver({ secret: SECRET, logger }).on('*', () => {
        throw new Error('boom');
      });
      const body = envelope();
      await receiver.handle(signed(body, { secret: 'whsec_other' }));
      expect(logger.warn).toHaveBeenCalledWith(
        expect.objectContaining({ status: 401, code: 'INVALID_SIGNATURE' }),
        expect.stringContaining('401'),
      );
      await receiver.handle(signed(body));
      expect(logger.error).toHaveBeenCalledWith(
        expect.objectContaining({ phase: 'handler', event: body.event, deliveryId: body.deliveryId }),
        expect.stringContaining('boom'),
      );
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleError.mockRestore();
    }
  });
});

/** An in-process queue: the contract's behaviour (idempotent enqueue, retries, dead letters) without a server. */
function memoryQueue(options: { maxAttempts?: number; failEnqueue?: boolean } = {}) {
  const jobs = new Map<string, { payload: unknown; attempts: number }>();
  const dead = new Map<string, { reason: string; attempts: number; kind?: string }>();
  const maxAttempts = options.maxAttempts ?? 3;
  let process: ((job: QueueJob) => Promise<JobResult>) | undefined;
  const queue: DeliveryQueue & { runAll(): Promise<void>; put(id: string, payload: unknown): void; dead: typeof dead } = {
    name: 'memory',
    dead,
    async enqueue(job: QueuedDelivery) {
      if (options.failEnqueue) throw new Error('queue down');
      const id = job.delivery.deliveryId;
      if (jobs.has(id) || dead.has(id)) return { duplicate: true };
      jobs.set(id, { payload: structuredClone(job), attempts: 0 });
      return { duplicate: false };
    },
    put(id, payload) {
      jobs.set(id, { payload, attempts: 0 });
    },
    work(run) {
      process = run;
      return { close: async () => {} };
    },
    async runAll() {
      for (const [id, job] of [...jobs]) {
        while (jobs.has(id)) {
          job.attempts += 1;
          try {
            const result = await (process as NonNullable<typeof process>)({ payload: job.payload, attempt: job.attempts, maxAttempts });
            jobs.delete(id);
            if (result.status === 'dead') dead.set(id, { reason: result.reason, attempts: job.attempts, kind: result.kind });
          } catch (error) {
            if (job.attempts >= maxAttempts) {
              jobs.delete(id);
              dead.set(id, { reason: String(error), attempts: job.attempts });
            }
          }
        }
      }
    },
    async deadLetters() {
      return [];
    },
    async replay() {
      return false;
    },
    async replayAll() {
      return 0;
    },
    async close() {},
  };
  return queue;
}

describe('answer-fast mode', () => {
  it('answers 202 queued once the job is in the queue, 200 duplicate to a retry, and runs the handlers in the worker', async () => {
    const queue = memoryQueue();
    const receiver = createReceiver({ secret: SECRET, queue });
    const handler = vi.fn();
    receiver.on('message.delivered', handler);
    const input = signed(envelope());
    const answer = await receiver.handle(input);
    expect(answer.status).toBe(202);
    expect(json(answer)).toEqual({ ok: true, queued: true });
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
    expect(handler).not.toHaveBeenCalled();
    receiver.work({ concurrency: 2 });
    await queue.runAll();
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('answers 503 and releases the claim when the queue fails, so the retry is not a duplicate', async () => {
    const queue = memoryQueue({ failEnqueue: true });
    const store = memoryStore();
    const receiver = createReceiver({ secret: SECRET, queue, store }).onError(() => {});
    receiver.on('*', () => {});
    const input = signed(envelope());
    const answer = await receiver.handle(input);
    expect(answer.status).toBe(503);
    expect(json(answer).error?.details).toEqual({ reason: 'queue_unavailable', queue: 'memory' });
    expect((await receiver.handle(input)).status).toBe(503); // claimable again, not 409 or duplicate
  });

  it('a job delivered twice runs its handlers to success once; failures retry; PermanentFailure, corrupt payloads and unhandled events are dead-lettered with a reason', async () => {
    const queue = memoryQueue({ maxAttempts: 3 });
    const receiver = createReceiver({ secret: SECRET, queue }).onError(() => {});
    let flaky = 0;
    const ran: string[] = [];
    receiver.on('message.delivered', (delivery) => {
      ran.push(delivery.deliveryId);
      if (delivery.data.messageId === 'flaky' && ++flaky < 3) throw new Error('try again');
      if (delivery.data.messageId === 'doomed') throw new PermanentFailure('unknown message');
    });
    const ok = envelope();
    const flakyOne = envelope({ data: { messageId: 'flaky' } });
    const doomed = envelope({ data: { messageId: 'doomed' } });
    for (const body of [ok, flakyOne, doomed]) expect((await receiver.handle(signed(body))).status).toBe(202);
    queue.put('copy', { delivery: ok, receivedAt: Date.now(), secretIndex: 0 }); // the queue hands the same delivery out twice
    queue.put('corrupt', { delivery: { event: 'message.delivered' } });
    queue.put('orphan', { delivery: envelope({ event: 'call.completed' }), receivedAt: Date.now(), secretIndex: 0 });
    receiver.work();
    await queue.runAll();
    expect(ran.filter((id) => id === ok.deliveryId)).toHaveLength(1);
    expect(ran.filter((id) => id === flakyOne.deliveryId)).toHaveLength(3);
    expect([...queue.dead.keys()].sort()).toEqual([String(doomed.deliveryId), 'corrupt', 'orphan'].sort());
    expect(queue.dead.get(String(doomed.deliveryId))?.reason).toMatch(/PermanentFailure: unknown message/);
    expect(queue.dead.get('corrupt')?.reason).toMatch(/corrupt job/);
    expect(queue.dead.get('orphan')?.reason).toMatch(/no handler takes call.completed/);
    // Why each was ended, as a field: a backend or a test sorts dead letters by it, not by the text.
    expect(queue.dead.get(String(doomed.deliveryId))?.kind).toBe('permanent');
    expect(queue.dead.get('corrupt')?.kind).toBe('corrupt');
    expect(queue.dead.get('orphan')?.kind).toBe('unhandled');
  });

  it("carries the trace context a subscriber set at receipt into the job, and hands it to the worker's trace", async () => {
    const queue = memoryQueue();
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const traces: DeliveryTrace[] = [];
    const atStart: Partial<DeliveryTrace>[] = [];
    traceEvents((trace) => {
      traces.push(trace);
      atStart.push({ ...trace });
      if (trace.mode === 'receive') trace.traceparent = traceparent;
    });
    const receiver = createReceiver({ secret: SECRET, queue }).on('*', () => {});
    expect((await receiver.handle(signed(envelope()))).status).toBe(202);
    receiver.work();
    await queue.runAll();
    expect(traces.map((t) => [t.mode, t.outcome])).toEqual([
      ['receive', 'queued'],
      ['work', 'handled'],
    ]);
    expect(traces[1]?.traceparent).toBe(traceparent);
    // the worker's trace carries what the job knows already when `start` is published
    expect(atStart[1]).toMatchObject({ mode: 'work', traceparent, event: 'message.delivered', tries: 1 });
  });

  it("keeps the worker's records under <namespace>work: (and the tenant's scope), and claims nothing on receipt", async () => {
    const queue = memoryQueue();
    const inner = memoryStore();
    const claimed: string[] = [];
    const store = {
      ...inner,
      claim: (key: string, token: string, leaseMs: number) => {
        claimed.push(key);
        return inner.claim(key, token, leaseMs);
      },
      complete: inner.complete,
      release: inner.release,
      extend: inner.extend,
    };
    const receiver = createReceiver({ secret: () => ({ tenant: 'acme', secret: SECRET }), queue, store, namespace: 'app:' });
    receiver.on('*', () => {});
    const body = envelope();
    expect((await receiver.handle(signed(body))).status).toBe(202);
    receiver.work();
    await queue.runAll();
    expect(claimed).toEqual([`app:work:tenant:acme:${body.deliveryId}`]);

    const failing = createReceiver({ secret: SECRET, queue: memoryQueue({ failEnqueue: true }) }).onError(() => {});
    failing.on('*', () => {});
    expect(json(await failing.handle(signed(envelope()))).error?.message).toBe(
      'The queue (memory) did not take the delivery; it was not processed and the service will retry.',
    );
  });

  it('refuses work() without a queue, and a queue or logger of the wrong shape, naming the fix', () => {
    expect(() => createReceiver({ secret: SECRET }).work()).toThrow(/needs a queue/);
    expect(() => createReceiver({ secret: SECRET, queue: {} as never })).toThrow(/bullmqQueue/);
    expect(() => createReceiver({ secret: SECRET, logger: console.log as never })).toThrow(/logger must have/);
  });
});
