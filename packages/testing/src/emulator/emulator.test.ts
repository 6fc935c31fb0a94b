import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../sign';
import { startServiceEmulator, type ServiceEmulator } from './start-service-emulator';

// The emulator over real HTTP, called with plain fetch: the service's status rules and error shapes,
// and deliveries made exactly as the service makes them.
let emulator: ServiceEmulator;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver that records every request and answers with the next status of `statuses` (then 200). */
async function startReceiver(statuses: number[] = []) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      if (statuses[0] === 0) return; // 0: never answer
      res.writeHead(statuses.shift() ?? 200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

async function api(method: string, path: string, body?: unknown, key: string | null = emulator.apiKey) {
  const response = await fetch(`${emulator.url}${path}`, {
    method,
    headers: { ...(key === null ? {} : { 'x-api-key': key }), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

beforeAll(async () => {
  emulator = await startServiceEmulator({ timeScale: 0.0001 });
});
afterAll(() => emulator.close());

describe('the webhook API', () => {
  it('answers 401 INVALID_API_KEY to a missing or unknown key', async () => {
    expect(await api('GET', '/v1/webhooks', undefined, null)).toEqual({
      status: 401,
      body: { error: { code: 'INVALID_API_KEY', message: 'The x-api-key header is missing' } },
    });
    expect(await api('GET', '/v1/webhooks', undefined, 'sk_live_nobody')).toMatchObject({
      status: 401,
      body: { error: { code: 'INVALID_API_KEY' } },
    });
  });

  it('answers 400 VALIDATION_ERROR naming the field and the issue', async () => {
    const cases: [unknown, string, string][] = [
      [{ events: ['message.read'] }, 'url', 'required'],
      [{ url: 'http://example.com/x', events: ['message.read'] }, 'url', 'must be https'],
      [{ url: 'https://example.com/x' }, 'events', 'required'],
      [{ url: 'https://example.com/x', events: ['message.read', 'nope'] }, 'events[1]', 'unknown event'],
      [{ url: 'https://example.com/x', events: ['message.read'], isActive: 'yes' }, 'isActive', 'must be a boolean'],
      ['{"url":', 'body', 'not valid JSON'],
    ];
    for (const [body, field, issue] of cases) {
      const answer = await api('POST', '/v1/webhooks', body);
      expect(answer.status, field).toBe(400);
      expect(answer.body.error, field).toMatchObject({ code: 'VALIDATION_ERROR', details: { field, issue } });
    }
    expect(emulator.webhooks()).toEqual([]);
  });

  it('answers 404 NOT_FOUND for an unknown webhook, delivery or route', async () => {
    const created = await api('POST', '/v1/webhooks', { url: 'https://example.com/404', events: ['message.read'] });
    for (const [method, path] of [
      ['PATCH', '/v1/webhooks/whk_missing'],
      ['DELETE', '/v1/webhooks/whk_missing'],
      ['GET', '/v1/webhooks/whk_missing/deliveries'],
      ['POST', `/v1/webhooks/${created.body.id}/deliveries/wdl_missing/replay`],
      ['GET', '/v1/lines'],
    ] as const) {
      const answer = await api(method, path, method === 'PATCH' ? { isActive: false } : undefined);
      expect(answer.status, path).toBe(404);
      expect(answer.body.error.code, path).toBe('NOT_FOUND');
    }
    expect((await api('DELETE', `/v1/webhooks/${created.body.id}`)).status).toBe(204);
  });

  it('answers a repeated POST with the same idempotency key once', async () => {
    const post = () =>
      fetch(`${emulator.url}/v1/webhooks`, {
        method: 'POST',
        headers: { 'x-api-key': emulator.apiKey, 'content-type': 'application/json', 'idempotency-key': 'same-key' },
        body: JSON.stringify({ url: 'https://example.com/once', events: ['message.read'] }),
      }).then((response) => response.json());
    const [first, second] = [await post(), await post()];
    expect(second).toEqual(first);
    expect(emulator.webhooks().filter((webhook) => webhook.url === 'https://example.com/once')).toHaveLength(1);
    await api('DELETE', `/v1/webhooks/${first.id}`);
  });
});

describe('deliveries', () => {
  it("delivers to active subscribed webhooks only, signed with each one's secret, with the three headers", async () => {
    const receiver = await startReceiver();
    const subscribed = await api('POST', '/v1/webhooks', { url: receiver.url, events: ['message.delivered'] });
    const inactive = await api('POST', '/v1/webhooks', { url: receiver.url, events: ['message.delivered'], isActive: false });
    const other = await api('POST', '/v1/webhooks', { url: receiver.url, events: ['message.read'] });

    const emitted = await emulator.emit('message.delivered', { to: '+447700900123' });
    expect(emitted.map((delivery) => delivery.webhookId)).toEqual([subscribed.body.id]);
    expect(receiver.received).toHaveLength(1);
    const [{ headers, body }] = receiver.received as [Received];
    expect(Object.keys(JSON.parse(body))).toEqual(['event', 'timestamp', 'deliveryId', 'data']);
    const delivery = JSON.parse(body);
    expect(delivery).toMatchObject({ event: 'message.delivered', deliveryId: emitted[0]!.deliveryId, data: { to: '+447700900123' } });
    expect(delivery.data.messageId).toMatch(/^msg_/);
    expect(delivery.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(headers['x-service-signature']).toBe(sign(body, subscribed.body.signingSecret));
    expect(headers['x-service-event']).toBe('message.delivered');
    expect(headers['x-service-delivery-id']).toBe(delivery.deliveryId);

    for (const webhook of [subscribed, inactive, other]) await api('DELETE', `/v1/webhooks/${webhook.body.id}`);
    await receiver.close();
  });

  it('retries on the (scaled) schedule with the same deliveryId until a 2xx, and lists every attempt', async () => {
    const receiver = await startReceiver([500, 503]);
    const webhook = await api('POST', '/v1/webhooks', { url: receiver.url, events: ['call.completed'] });
    const [delivery] = await emulator.emit('call.completed');
    expect(delivery!.firstAttempt).toMatchObject({ attempt: 1, status: 'failed', responseCode: 500 });
    expect(delivery!.firstAttempt.nextAttemptAt).toEqual(expect.any(String));
    await emulator.drain();

    const ids = receiver.received.map((request) => request.headers['x-service-delivery-id']);
    expect(ids).toEqual([delivery!.deliveryId, delivery!.deliveryId, delivery!.deliveryId]);
    expect(new Set(receiver.received.map((request) => request.body)).size).toBe(1); // the same bytes every time
    const attempts = (await api('GET', `/v1/webhooks/${webhook.body.id}/deliveries`)).body.data;
    expect(attempts.map((a: { attempt: number; responseCode: number; status: string }) => [a.attempt, a.responseCode, a.status])).toEqual([
      [3, 200, 'succeeded'],
      [2, 503, 'failed'],
      [1, 500, 'failed'],
    ]);
    expect(emulator.deliveries()[0]).toMatchObject({ deliveryId: delivery!.deliveryId, outcome: 'succeeded', nextAttemptAt: null });
    await api('DELETE', `/v1/webhooks/${webhook.body.id}`);
    await receiver.close();
  });

  it('counts an answer that does not come within the limit as a time-out', async () => {
    const slow = await startServiceEmulator({ attemptTimeoutMs: 200 });
    const receiver = await startReceiver([0]);
    const created = await fetch(`${slow.url}/v1/webhooks`, {
      method: 'POST',
      headers: { 'x-api-key': slow.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['message.read'] }),
    });
    expect(created.status).toBe(201);
    const [delivery] = await slow.emit('message.read');
    expect(delivery!.firstAttempt).toMatchObject({ status: 'timeout', responseCode: null });
    await slow.close(); // cancels the retry due in 30 s
    await receiver.close();
  });

  it('refuses to emit an event outside the catalogue', async () => {
    await expect(emulator.emit('message.deliverd')).rejects.toThrow(/not a catalogue event/);
  });
});

describe('the inspector endpoints', () => {
  it('serves the page, the state, a change stream, and trigger/replay that insist on JSON', async () => {
    const page = await fetch(emulator.inspectorUrl);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('<title>hookline emulator');

    const receiver = await startReceiver();
    const webhook = await api('POST', '/v1/webhooks', { url: receiver.url, events: ['group.created'] });
    const stream = await fetch(`${emulator.url}/inspector/stream`);
    const reader = stream.body!.getReader();
    await reader.read(); // the retry: line

    const formPost = await fetch(`${emulator.url}/inspector/trigger`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{"event":"group.created"}',
    });
    expect(formPost.status).toBe(400);
    const trigger = await fetch(`${emulator.url}/inspector/trigger`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"event":"group.created"}',
    });
    const { deliveries } = await trigger.json();
    expect(deliveries).toHaveLength(1);
    expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/^data: \d+/);
    await reader.cancel();

    const replay = await fetch(`${emulator.url}/inspector/replay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ webhookId: webhook.body.id, deliveryId: deliveries[0].deliveryId }),
    });
    expect((await replay.json()).attempt).toMatchObject({ attempt: 2, trigger: 'replay', responseCode: 200 });
    const state = await (await fetch(`${emulator.url}/inspector/state`)).json();
    expect(state.events).toHaveLength(29);
    expect(state.deliveries[0]).toMatchObject({
      deliveryId: deliveries[0].deliveryId,
      webhookId: webhook.body.id,
      attempts: [{ attempt: 1 }, { attempt: 2 }],
    });
    await api('DELETE', `/v1/webhooks/${webhook.body.id}`);
    await receiver.close();
  });
});
