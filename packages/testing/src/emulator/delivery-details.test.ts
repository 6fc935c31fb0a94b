import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadPort } from '../receiver.test-support';
import { sign } from '../sign';
import { INSPECTOR_PAGE } from './inspector-page';
import { INSPECTOR_SCRIPT } from './inspector-script';
import { startServiceEmulator, type ServiceEmulator } from './start-service-emulator';

// What the emulator tells of each delivery (the inspector's state, operation 5): what was sent, every
// answer with its headers, why an attempt got none; and the emulator-only parts of the loop: a webhook
// registered with a secret the app already has, a resend, and the exact bytes on demand.
let emulator: ServiceEmulator;
const servers: Server[] = [];

beforeAll(async () => {
  emulator = await startServiceEmulator({ timeScale: 0.0001 });
});
afterAll(async () => {
  await emulator.close();
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

async function endpoint(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${emulator.url}${path}`, {
    method,
    headers: { 'x-api-key': emulator.apiKey, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

describe('a webhook registered with signingSecret (the emulator only)', () => {
  it('signs every delivery with that secret', async () => {
    const received: { signature: string; body: string }[] = [];
    const url = await endpoint((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ signature: String(req.headers['x-service-signature']), body });
        res.writeHead(200).end();
      });
    });
    const created = await call('POST', '/v1/webhooks', { url, events: ['contact.opted_out'], signingSecret: 'whsec_the_apps_own' });
    expect(created).toMatchObject({ status: 201, body: { signingSecret: 'whsec_the_apps_own' } });
    await emulator.emit('contact.opted_out');
    expect(received).toHaveLength(1);
    expect(received[0]!.signature).toBe(sign(received[0]!.body, 'whsec_the_apps_own'));
    await call('DELETE', `/v1/webhooks/${created.body.id}`);
  });

  it('refuses one that is empty, not a string, too long or has a control character, naming the field', async () => {
    for (const [signingSecret, issue] of [
      ['', 'must be a non-empty string'],
      [42, 'must be a non-empty string'],
      ['x'.repeat(1025), 'longer than 1024 characters'],
      ['whsec_abc\n', 'has a control character'],
    ] as const) {
      const refused = await call('POST', '/v1/webhooks', { url: 'https://example.com/x', events: ['contact.opted_out'], signingSecret });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'signingSecret', issue } });
    }
    expect(emulator.webhooks().filter((webhook) => webhook.url === 'https://example.com/x')).toEqual([]);
  });
});

describe('a delivery in the inspector state', () => {
  it('carries the request headers, the payload, the exact bytes on demand, and each answer with its headers', async () => {
    let calls = 0;
    const url = await endpoint((req, res) => {
      req.resume();
      calls++;
      if (calls === 1) res.writeHead(503, { 'retry-after': '1', 'content-type': 'text/plain' }).end('busy');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const created = await call('POST', '/v1/webhooks', { url, events: ['group.created'] });
    const [emitted] = await emulator.emit('group.created', { name: 'Ünïcode <b>team</b>' });
    await emulator.drain();

    const state = await (await fetch(`${emulator.url}/inspector/state?event=group.created`)).json();
    const delivery = state.deliveries.find((d: { deliveryId: string }) => d.deliveryId === emitted!.deliveryId);
    expect(delivery).toMatchObject({ status: 'succeeded', url, webhookId: created.body.id, payload: { event: 'group.created' } });
    expect(delivery.payload.data.name).toBe('Ünïcode <b>team</b>');
    expect(
      delivery.attempts.map((a: { responseCode: number; responseHeaders: Record<string, string>; responseBody: string }) => [
        a.responseCode,
        a.responseHeaders['content-type'],
        a.responseBody,
      ]),
    ).toEqual([
      [503, 'text/plain', 'busy'],
      [200, 'application/json', '{"ok":true}'],
    ]);
    expect(delivery.attempts[0].responseHeaders['retry-after']).toBe('1');

    const raw = await fetch(`${emulator.url}/inspector/deliveries/${emitted!.deliveryId}/body`);
    expect(raw.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const bytes = Buffer.from(await raw.arrayBuffer());
    expect(delivery.request).toEqual({
      method: 'POST',
      bodyBytes: bytes.byteLength,
      headers: {
        'content-type': 'application/json',
        'x-service-event': 'group.created',
        'x-service-delivery-id': emitted!.deliveryId,
        'x-service-signature': sign(bytes, created.body.signingSecret),
      },
    });
    expect(JSON.parse(bytes.toString('utf8'))).toEqual(delivery.payload);
    expect((await fetch(`${emulator.url}/inspector/deliveries/wdl_unknown/body`)).status).toBe(404);

    // Operation 5 lists the same answers.
    const listed = await call('GET', `/v1/webhooks/${created.body.id}/deliveries`);
    expect(listed.body.data[1]).toMatchObject({ responseCode: 503, responseHeaders: { 'retry-after': '1' }, responseTruncated: false });
    await call('DELETE', `/v1/webhooks/${created.body.id}`);
  });

  it('says why an attempt got no answer, and filters by status (failed: retrying or given up)', async () => {
    const created = await call('POST', '/v1/webhooks', {
      url: `http://127.0.0.1:${await deadPort()}/webhooks`,
      events: ['line.status_changed'],
    });
    const [emitted] = await emulator.emit('line.status_changed');
    expect(emitted!.firstAttempt).toMatchObject({
      status: 'network-error',
      responseCode: null,
      error: { code: 'ECONNREFUSED', message: expect.stringMatching(/^connect ECONNREFUSED 127\.0\.0\.1:\d+$/) },
      responseBody: expect.stringMatching(
        /^connect ECONNREFUSED 127\.0\.0\.1:\d+ \(nothing is listening there: is the app running, on that port\?\)$/,
      ),
    });
    const failed = await (await fetch(`${emulator.url}/inspector/state?status=failed`)).json();
    expect(failed.deliveries.map((d: { deliveryId: string }) => d.deliveryId)).toContain(emitted!.deliveryId);
    expect(failed.deliveries.every((d: { status: string }) => d.status === 'retrying' || d.status === 'gave-up')).toBe(true);
    const succeeded = await (await fetch(`${emulator.url}/inspector/state?status=succeeded`)).json();
    expect(succeeded.deliveries.map((d: { deliveryId: string }) => d.deliveryId)).not.toContain(emitted!.deliveryId);
    expect(succeeded.filter).toEqual({ status: 'succeeded' });

    const unknown = await fetch(`${emulator.url}/inspector/state?status=broken`);
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'status', issue: 'unknown status' } });
    await call('DELETE', `/v1/webhooks/${created.body.id}`);
  });

  it('keeps 8,192 characters of an answer and reads no further', async () => {
    let written = 0;
    const url = await endpoint((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-type': 'text/html' });
      const chunk = Buffer.alloc(64 * 1024, 'y');
      const pump = () => {
        while (written < 256 * 1024 * 1024 && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const created = await call('POST', '/v1/webhooks', { url, events: ['call.failed'] });
    const [emitted] = await emulator.emit('call.failed');
    expect(emitted!.firstAttempt).toMatchObject({ status: 'failed', responseCode: 500, responseTruncated: true });
    expect(emitted!.firstAttempt.responseBody).toBe('y'.repeat(8_192));
    expect(written).toBeLessThan(32 * 1024 * 1024);
    await call('DELETE', `/v1/webhooks/${created.body.id}`);
  });
});

describe('resend', () => {
  it('sends the same event and data to the same webhook as a new delivery', async () => {
    const bodies: string[] = [];
    const url = await endpoint((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(200).end();
      });
    });
    const created = await call('POST', '/v1/webhooks', { url, events: ['workflow.completed'] });
    const [original] = await emulator.emit('workflow.completed', { runId: 'run_42' });
    const post = (body: unknown) =>
      fetch(`${emulator.url}/inspector/resend`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const resent = (await (await post({ webhookId: created.body.id, deliveryId: original!.deliveryId })).json()).delivery;
    expect(resent).toMatchObject({ webhookId: created.body.id, event: 'workflow.completed', firstAttempt: { status: 'succeeded' } });
    expect(resent.deliveryId).not.toBe(original!.deliveryId);
    const [first, second] = bodies.map((body) => JSON.parse(body));
    expect(second.data).toEqual(first.data);
    expect(second.deliveryId).toBe(resent.deliveryId);
    expect((await post({ webhookId: created.body.id, deliveryId: 'wdl_unknown' })).status).toBe(404);
    expect((await post({ webhookId: created.body.id })).status).toBe(400);
    await call('DELETE', `/v1/webhooks/${created.body.id}`);
  });
});

describe('the inspector page', () => {
  it('writes nothing as HTML: no innerHTML, outerHTML, insertAdjacentHTML, document.write or DOMParser in its script', () => {
    expect(INSPECTOR_SCRIPT).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment|srcdoc/,
    );
    expect(INSPECTOR_SCRIPT).toContain('node.append(child instanceof Node ? child : String(child'); // strings become text nodes
    expect(INSPECTOR_PAGE).toContain(`<script>${INSPECTOR_SCRIPT}</script>`);
  });
});
