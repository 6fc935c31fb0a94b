import { startServiceEmulator, type ServiceEmulator } from '@hookline/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServiceClient, type ServiceClientOptions } from './create-service-client';
import { ServiceError } from './service-error';

// Every test talks to the local service emulator over real HTTP. Waits between retries go through an
// injected sleep that records them, so the computed 1, 2, 4, 8, 16 s are asserted without being slept.
let emulator: ServiceEmulator;
let waits: number[];

beforeAll(async () => {
  emulator = await startServiceEmulator();
});
afterAll(() => emulator.close());
beforeEach(() => {
  waits = [];
});

function client(options: Partial<ServiceClientOptions> = {}) {
  return createServiceClient({
    apiKey: emulator.apiKey,
    baseUrl: emulator.url,
    sleep: async (ms) => {
      waits.push(ms);
    },
    random: () => 0.5,
    ...options,
  });
}

/** The error a call rejects with. */
async function failure(call: Promise<unknown>): Promise<ServiceError> {
  const error = await call.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!ServiceError.is(error)) throw new Error(`expected a ServiceError, got ${String(error)}`);
  return error;
}

/** How many requests the emulator received during `work`. */
async function requestsDuring(work: () => Promise<unknown>): Promise<number> {
  const before = emulator.requests().length;
  await work().catch(() => {});
  return emulator.requests().length - before;
}

describe('webhook operations 1–6', () => {
  it('creates (with the signingSecret), lists, updates and deletes a webhook', async () => {
    const service = client();
    const created = await service.webhooks.create({
      url: 'https://example.com/hooks',
      events: ['message.delivered', 'call.completed'],
      isActive: false,
    });
    expect(created).toMatchObject({ url: 'https://example.com/hooks', events: ['message.delivered', 'call.completed'], isActive: false });
    expect(created.signingSecret).toMatch(/^whsec_/);
    expect(created.createdAt).toEqual(expect.any(String)); // a field the service does not document is kept

    const listed = await service.webhooks.list();
    expect(listed.data.find((webhook) => webhook.id === created.id)).toMatchObject({ url: 'https://example.com/hooks' });
    expect(listed.data.every((webhook) => webhook.signingSecret === undefined)).toBe(true);

    const updated = await service.webhooks.update(created.id, { isActive: true, events: ['message.read'] });
    expect(updated).toMatchObject({ id: created.id, isActive: true, events: ['message.read'] });

    expect(await service.webhooks.delete(created.id)).toEqual({});
    const gone = await failure(service.webhooks.update(created.id, { isActive: false }));
    expect(gone).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect(gone.requestId).toMatch(/^req_/);
  });

  it('checks input before sending and names what is wrong', async () => {
    const service = client();
    const sent = await requestsDuring(async () => {
      await expect(service.webhooks.create({ url: 'http://example.com/hooks', events: ['message.read'] })).rejects.toThrow(
        /url must be https/,
      );
      await expect(service.webhooks.create({ url: 'ftp://localhost/x', events: ['message.read'] })).rejects.toThrow(/url must be https/);
      await expect(service.webhooks.create({ url: 'https://example.com', events: [] })).rejects.toThrow(/non-empty array/);
      await expect(
        // @ts-expect-error: not a catalogue name
        service.webhooks.create({ url: 'https://example.com', events: ['message.read', 'message.deliverd'] }),
      ).rejects.toThrow('events[1] "message.deliverd" is not in the service\'s event catalogue (did you mean message.delivered?)');
      await expect(service.webhooks.update('whk_1', {})).rejects.toThrow(/at least one of url, events, isActive/);
      await expect(service.webhooks.replay('whk_1', '')).rejects.toThrow(/deliveryId is required/);
    });
    expect(sent).toBe(0);
    // http is fine for localhost: the emulator and a receiver in development.
    const local = await service.webhooks.create({ url: 'http://localhost:3000/webhooks', events: ['message.read'] });
    await service.webhooks.delete(local.id);
  });
});

describe('errors (docs/service-contract.md §5)', () => {
  it('maps every documented code, with status, message, details and the request id', async () => {
    const cases: [number, string, Record<string, unknown>?][] = [
      [400, 'VALIDATION_ERROR', { field: 'url', issue: 'must be https' }],
      [401, 'INVALID_API_KEY'],
      [403, 'FORBIDDEN'],
      [403, 'ACCOUNT_SUSPENDED'], // the "more specific code" the service does not list is kept as sent
      [404, 'NOT_FOUND'],
      [409, 'CONFLICT', { reason: 'opted_out', to: '+447700900123' }],
      [422, 'DELIVERY_ERROR', { reason: 'not_imessage_capable' }],
      [429, 'RATE_LIMITED'],
      [500, 'INTERNAL_ERROR'],
      [502, 'UPSTREAM_ERROR'],
      [503, 'SERVICE_UNAVAILABLE'],
    ];
    const service = client({ retries: 0 });
    for (const [status, code, details] of cases) {
      emulator.injectFault({ status, code, message: `the ${code} message`, ...(details ? { details } : {}) });
      const error = await failure(service.webhooks.list());
      expect(error, code).toBeInstanceOf(ServiceError);
      expect(error, code).toMatchObject({
        name: 'ServiceError',
        status,
        code,
        message: `the ${code} message`,
        details,
        request: 'GET /v1/webhooks',
      });
      expect(error.requestId, code).toMatch(/^req_/);
    }
  });

  it('turns an answer that is not JSON into a ServiceError coded from its status', async () => {
    emulator.injectFault({ status: 502, body: '<html><h1>502 Bad Gateway</h1></html>' });
    const error = await failure(client({ retries: 0 }).webhooks.list());
    expect(error).toMatchObject({ status: 502, code: 'UPSTREAM_ERROR' });
    expect(error.message).toContain("not the service's error shape: <html><h1>502 Bad Gateway</h1></html>");
  });

  it('answers 401 INVALID_API_KEY to a well-formed key the service does not know, tried once', async () => {
    const stranger = client({ apiKey: 'sk_live_unknown_to_the_emulator' });
    let error: ServiceError | undefined;
    expect(await requestsDuring(async () => (error = await failure(stranger.webhooks.list())))).toBe(1);
    expect(error).toMatchObject({ status: 401, code: 'INVALID_API_KEY' });
    expect(error!.message).not.toContain('unknown_to_the_emulator');
  });

  it('refuses a malformed key before anything reaches the network', () => {
    let fetched = 0;
    const before = emulator.requests().length;
    expect(() =>
      createServiceClient({
        apiKey: 'sk_sandbox',
        baseUrl: emulator.url,
        fetch: async () => {
          fetched++;
          return new Response();
        },
      }),
    ).toThrow(/apiKey \(10 characters\) is malformed/);
    expect(fetched).toBe(0);
    expect(emulator.requests().length).toBe(before);
  });
});

describe('retries (docs/service-contract.md §7)', () => {
  it('tries a 400 once', async () => {
    emulator.injectFault({ status: 400, details: { field: 'events', issue: 'unknown event' } });
    expect(await requestsDuring(() => client().webhooks.list())).toBe(1);
    expect(waits).toEqual([]);
  });

  it('waits for Retry-After on a 429 (seconds or HTTP date), and backs off exponentially when 429s repeat', async () => {
    emulator.injectFault({ status: 429, retryAfter: 3 });
    const retried: string[] = [];
    await client({ onRetry: ({ reason, retry }) => retried.push(`${retry} ${reason}`) }).webhooks.list();
    expect(waits).toEqual([3000]);
    expect(retried).toEqual(['1 rate-limited']);

    waits = [];
    emulator.injectFault({ status: 429, retryAfter: 1, count: 3 });
    expect(await requestsDuring(() => client().webhooks.list())).toBe(4);
    expect(waits).toEqual([1000, 2000, 4000]);

    waits = [];
    emulator.injectFault({ status: 429, retryAfter: new Date(Date.now() + 60_000).toUTCString() });
    await client().webhooks.list();
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(50_000);
    expect(waits[0]).toBeLessThanOrEqual(60_000);
  });

  it('gives up at once when Retry-After asks for longer than maxRetryAfterMs, with retryAfterMs on the error', async () => {
    emulator.injectFault({ status: 429, retryAfter: 600 });
    const error = await failure(client().webhooks.list());
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfterMs: 600_000 });
    expect(waits).toEqual([]);
  });

  it('succeeds after five 503s, waiting 1, 2, 4, 8 and 16 s', async () => {
    emulator.injectFault({ status: 503, count: 5 });
    let result: unknown;
    expect(await requestsDuring(async () => (result = await client().webhooks.list()))).toBe(6);
    expect(result).toMatchObject({ data: expect.any(Array) });
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000]);
  });

  it('gives up after the sixth request when six 503s come', async () => {
    emulator.injectFault({ status: 503, count: 6 });
    let error: ServiceError | undefined;
    expect(await requestsDuring(async () => (error = await failure(client().webhooks.list())))).toBe(6);
    expect(error).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000]);
  });

  it('tries once with retries: 0', async () => {
    emulator.injectFault({ status: 500, count: 2 });
    expect(await requestsDuring(() => client({ retries: 0 }).webhooks.list())).toBe(1);
    expect(waits).toEqual([]);
    // The second injected 500 is still there: the first call did not retry into it.
    expect(await failure(client({ retries: 0 }).webhooks.list())).toMatchObject({ status: 500, code: 'INTERNAL_ERROR' });
  });

  it('retries network errors and time-outs with the same backoff', async () => {
    const closed = await startServiceEmulator();
    const url = closed.url;
    await closed.close();
    const error = await failure(client({ baseUrl: url, retries: 2 }).webhooks.list());
    expect(error).toMatchObject({ status: 0, code: 'NETWORK_ERROR' });
    expect(waits).toEqual([1000, 2000]);

    waits = [];
    emulator.injectFault({ hang: true });
    const reasons: string[] = [];
    const answer = await client({ timeoutMs: 1_000, onRetry: ({ reason }) => reasons.push(reason) }).webhooks.list();
    expect(answer.data).toEqual(expect.any(Array));
    expect(reasons).toEqual(['timeout']);
  });

  it('keeps one idempotency key across the retries of a POST', async () => {
    emulator.injectFault({ status: 500 });
    const before = emulator.requests().length;
    const created = await client().webhooks.create({ url: 'https://example.com/idem', events: ['message.read'] });
    const tries = emulator.requests().slice(before);
    expect(tries.map((request) => request.status)).toEqual([500, 201]);
    expect(tries[0]!.idempotencyKey).toBeDefined();
    expect(tries[1]!.idempotencyKey).toBe(tries[0]!.idempotencyKey);
    await client().webhooks.delete(created.id);
  });

  it('stops on an AbortSignal: during a hanging request and during the wait between tries', async () => {
    emulator.injectFault({ hang: true });
    const controller = new AbortController();
    const before = emulator.requests().length;
    const hanging = createServiceClient({ apiKey: emulator.apiKey, baseUrl: emulator.url }).webhooks.list({ signal: controller.signal });
    while (emulator.requests().length === before) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort(new Error('stopped by the test'));
    await expect(hanging).rejects.toThrow('stopped by the test');

    // The real sleep: the 1 s wait after a 503 is cut short by the abort.
    emulator.injectFault({ status: 503 });
    const waiting = new AbortController();
    const real = createServiceClient({
      apiKey: emulator.apiKey,
      baseUrl: emulator.url,
      onRetry: () => waiting.abort(new Error('stopped while waiting')),
    });
    await expect(real.webhooks.list({ signal: waiting.signal })).rejects.toThrow('stopped while waiting');
  });
});
