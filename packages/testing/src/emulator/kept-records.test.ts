import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startServiceEmulator, type ServiceEmulator } from './start-service-emulator';

// What the emulator remembers is bounded by count: the last N requests, deliveries, idempotency keys
// and attempts per delivery, the oldest dropped first, however long it runs.
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function emulatorWith(options: Parameters<typeof startServiceEmulator>[0]): Promise<ServiceEmulator> {
  const emulator = await startServiceEmulator(options);
  closers.push(() => emulator.close());
  return emulator;
}

/** A receiver that answers 500 to the events in `failing`, 200 to the rest. */
async function startReceiver(failing: readonly string[] = []) {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const status = failing.includes(String(req.headers['x-service-event'])) ? 500 : 200;
      res.writeHead(status, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  return listenForTest(server);
}

/** Listens on a free port, closed after the test; gives the webhook URL. */
async function listenForTest(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

function call(emulator: ServiceEmulator, method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}) {
  return fetch(`${emulator.url}${path}`, {
    method,
    headers: { 'x-api-key': emulator.apiKey, 'content-type': 'application/json', ...options.headers },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  }).then(async (response) => ({ status: response.status, body: response.status === 204 ? undefined : await response.json() }));
}

describe('requests()', () => {
  it('keeps the last maxRequestsKept requests, numbered across the ones dropped', async () => {
    const emulator = await emulatorWith({ maxRequestsKept: 5 });
    for (let i = 1; i <= 12; i++) await call(emulator, 'GET', i % 2 === 0 ? '/v1/webhooks' : `/v1/webhooks/whk_${i}`);
    const kept = emulator.requests();
    expect(kept.map((request) => request.seq)).toEqual([8, 9, 10, 11, 12]);
    expect(kept.map((request) => [request.path, request.status])).toEqual([
      ['/v1/webhooks', 200],
      ['/v1/webhooks/whk_9', 404],
      ['/v1/webhooks', 200],
      ['/v1/webhooks/whk_11', 404],
      ['/v1/webhooks', 200],
    ]);
  });

  it('keeps 1,000 by default', async () => {
    const emulator = await emulatorWith({});
    const unauthenticated = () => fetch(`${emulator.url}/v1/webhooks`).then((response) => response.arrayBuffer());
    for (let sent = 0; sent < 1_010; sent += 10) await Promise.all(Array.from({ length: 10 }, unauthenticated));
    const kept = emulator.requests();
    expect(kept).toHaveLength(1_000);
    expect(kept[0]!.seq).toBe(11);
    expect(kept.at(-1)!.seq).toBe(1_010);
  });

  it('refuses a bound that is not a whole number of at least 1', async () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      await expect(startServiceEmulator({ maxRequestsKept: bad }), String(bad)).rejects.toThrow(/maxRequestsKept/);
      await expect(startServiceEmulator({ maxDeliveriesKept: bad }), String(bad)).rejects.toThrow(/maxDeliveriesKept/);
    }
  });
});

describe('idempotency keys', () => {
  it('are remembered for the last maxRequestsKept POSTs that carried one', async () => {
    const emulator = await emulatorWith({ maxRequestsKept: 2 });
    const create = (key: string) =>
      call(emulator, 'POST', '/v1/webhooks', {
        body: { url: 'https://example.com/hook', events: ['message.read'] },
        headers: { 'idempotency-key': key },
      });
    const [first, , third] = [await create('k1'), await create('k2'), await create('k3')];
    expect((await create('k3')).body.id).toBe(third.body.id); // still remembered: the same answer
    expect((await create('k1')).body.id).not.toBe(first.body.id); // forgotten: created again
    expect(emulator.webhooks()).toHaveLength(4);
  });
});

describe('deliveries', () => {
  it('keeps the last maxDeliveriesKept across webhooks; an older one is forgotten', async () => {
    const url = await startReceiver();
    const emulator = await emulatorWith({ maxDeliveriesKept: 3 });
    const read = await call(emulator, 'POST', '/v1/webhooks', { body: { url, events: ['message.read'] } });
    const sent = await call(emulator, 'POST', '/v1/webhooks', { body: { url, events: ['message.sent'] } });
    const ids: string[] = [];
    for (const event of ['message.read', 'message.sent', 'message.read', 'message.sent', 'message.read']) {
      ids.push(...(await emulator.emit(event)).map((delivery) => delivery.deliveryId));
    }
    expect(emulator.deliveries().map((delivery) => delivery.deliveryId)).toEqual([ids[4], ids[3], ids[2]]);
    const listed = async (webhookId: string) =>
      (await call(emulator, 'GET', `/v1/webhooks/${webhookId}/deliveries`)).body.data.map(
        (attempt: { deliveryId: string }) => attempt.deliveryId,
      );
    expect(await listed(read.body.id)).toEqual([ids[4], ids[2]]);
    expect(await listed(sent.body.id)).toEqual([ids[3]]);
    expect(await call(emulator, 'POST', `/v1/webhooks/${read.body.id}/deliveries/${ids[0]}/replay`)).toMatchObject({
      status: 404,
      body: { error: { code: 'NOT_FOUND' } },
    });
  });

  it('cancels the pending retries of a delivery it forgets, so drain() does not wait for them', async () => {
    const url = await startReceiver(['message.failed']);
    const emulator = await emulatorWith({ maxDeliveriesKept: 2 }); // timeScale 1: the retry is due in 30 s
    await call(emulator, 'POST', '/v1/webhooks', { body: { url, events: ['message.read', 'message.failed'] } });
    const [failed] = await emulator.emit('message.failed');
    expect(failed!.firstAttempt).toMatchObject({ status: 'failed', responseCode: 500, nextAttemptAt: expect.any(String) });
    await emulator.emit('message.read');
    await emulator.emit('message.read');
    let bound: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      emulator.drain().then(() => 'drained'),
      new Promise((resolve) => (bound = setTimeout(resolve, 10_000, 'still waiting for the forgotten retry'))),
    ]);
    clearTimeout(bound);
    expect(outcome).toBe('drained');
    expect(emulator.deliveries().map((delivery) => delivery.event)).toEqual(['message.read', 'message.read']);
  });

  it('keeps 1,000 by default', async () => {
    const url = await startReceiver();
    const emulator = await emulatorWith({});
    await call(emulator, 'POST', '/v1/webhooks', { body: { url, events: ['message.read'] } });
    for (let sent = 0; sent < 1_005; sent += 5) await Promise.all(Array.from({ length: 5 }, () => emulator.emit('message.read')));
    expect(emulator.deliveries()).toHaveLength(1_000);
  });

  it('keeps the last 100 attempts of a delivery replayed over and over', async () => {
    const url = await startReceiver();
    const emulator = await emulatorWith({});
    const webhook = await call(emulator, 'POST', '/v1/webhooks', { body: { url, events: ['message.read'] } });
    const [delivery] = await emulator.emit('message.read');
    for (let i = 0; i < 105; i++) await call(emulator, 'POST', `/v1/webhooks/${webhook.body.id}/deliveries/${delivery!.deliveryId}/replay`);
    const attempts = emulator.deliveries()[0]!.attempts.map((attempt) => attempt.attempt);
    expect(attempts).toHaveLength(100);
    expect([attempts[0], attempts.at(-1)]).toEqual([7, 106]);
    const listed = (await call(emulator, 'GET', `/v1/webhooks/${webhook.body.id}/deliveries`)).body.data;
    expect(listed).toHaveLength(100);
    expect(listed[0].attempt).toBe(106);
  });
});

describe('answers', () => {
  /** A receiver that answers 500 with a body of `chars` characters. */
  async function startLongAnswers(chars: number) {
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end('e'.repeat(chars)));
    });
    return listenForTest(server);
  }

  it('keeps maxAnswerCharsKept of each answer and maxAnswerCharsKeptInTotal of all, dropping the oldest first, and says so in /inspector/state', async () => {
    const url = await startLongAnswers(3_000);
    const emulator = await emulatorWith({ maxAnswerCharsKept: 1_000, maxAnswerCharsKeptInTotal: 5_000 });
    await call(emulator, 'POST', '/v1/webhooks', { body: { url, events: ['message.read'] } });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(...(await emulator.emit('message.read')).map((delivery) => delivery.deliveryId));
    const state = await fetch(`${emulator.url}/inspector/state`).then((response) => response.json());
    expect(state.answers).toMatchObject({ maxCharsPerAnswer: 1_000, maxCharsInTotal: 5_000, dropped: expect.any(Number) });
    expect(state.answers.chars).toBeLessThanOrEqual(5_000);
    expect(state.answers.dropped).toBeGreaterThan(0);
    const firstAttempt = (deliveryId: string) =>
      state.deliveries.find((delivery: { deliveryId: string }) => delivery.deliveryId === deliveryId).attempts[0];
    // The newest answer is kept, cut at 1,000 characters; the oldest was dropped, its attempt still listed.
    expect(firstAttempt(ids.at(-1)!)).toMatchObject({ responseCode: 500, responseBody: 'e'.repeat(1_000), responseTruncated: true });
    expect(firstAttempt(ids.at(-1)!).answerDropped).toBeUndefined();
    expect(firstAttempt(ids[0]!)).toMatchObject({
      responseCode: 500,
      answerDropped: true,
      responseHeaders: {},
      responseBody: expect.stringContaining('answer dropped: the emulator keeps at most 5000 characters of answers in total'),
    });
    const kept = state.deliveries.filter((delivery: { attempts: { answerDropped?: boolean }[] }) => !delivery.attempts[0]?.answerDropped);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(ids.length);
    // Dropped oldest first: every kept answer is newer than every dropped one.
    const order = state.deliveries.map(
      (delivery: { attempts: { answerDropped?: boolean }[] }) => delivery.attempts[0]?.answerDropped === true,
    );
    expect(order).toEqual([...order].sort());
  });

  it('refuses an answer bound that is not a whole number of at least 1', async () => {
    await expect(startServiceEmulator({ maxAnswerCharsKept: 0 })).rejects.toThrow(/maxAnswerCharsKept /);
    await expect(startServiceEmulator({ maxAnswerCharsKeptInTotal: 1.5 })).rejects.toThrow(/maxAnswerCharsKeptInTotal/);
  });
});
