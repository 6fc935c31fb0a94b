// serveFunctionUrl: a real webhookHandler behind the local Function URL stand-in, over real HTTP.
import { createHmac, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createReceiver } from '@hookline/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serveFunctionUrl } from './local';
import { webhookHandler } from './webhook-handler';

const SECRET = 'whsec_local_function_url';
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

async function serve(handler: Parameters<typeof serveFunctionUrl>[0]): Promise<string> {
  const server = await serveFunctionUrl(handler, { port: 0 });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function signedDelivery() {
  const deliveryId = `wdl_${randomBytes(12).toString('hex')}`;
  // Bytes that are not valid UTF-8 would not survive a text body: the stand-in sends base64 as Lambda does.
  const body = JSON.stringify({
    event: 'message.delivered',
    timestamp: new Date().toISOString(),
    deliveryId,
    data: { messageId: 'msg_1', to: '+15550100', deliveredAt: new Date().toISOString(), note: 'é ☃' },
  });
  const headers = {
    'content-type': 'application/json',
    'x-service-signature': createHmac('sha256', SECRET).update(body).digest('hex'),
    'x-service-event': 'message.delivered',
    'x-service-delivery-id': deliveryId,
  };
  return { deliveryId, body, headers };
}

describe('serveFunctionUrl', () => {
  it("hands a request to the handler as a Function URL event and answers with the handler's result", async () => {
    const seen: string[] = [];
    const receiver = createReceiver({ secret: SECRET }).on('message.delivered', ({ deliveryId, data }) => {
      seen.push(`${deliveryId} ${String((data as { note?: string }).note)}`);
    });
    const url = await serve(webhookHandler(receiver));
    const delivery = signedDelivery();
    const response = await fetch(`${url}/webhooks?x=1`, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(response.status).toBe(200);
    expect(seen).toEqual([`${delivery.deliveryId} é ☃`]);
    const again = await fetch(`${url}/webhooks`, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(again.status).toBe(200); // a duplicate of one that completed
    expect(seen).toHaveLength(1);
    const refused = await fetch(`${url}/webhooks`, { method: 'GET' });
    expect(refused.status).toBe(405);
    expect(refused.headers.get('allow')).toBe('POST');
  });

  it('gives the event the path, query, method and headers of the request', async () => {
    const events: unknown[] = [];
    const url = await serve(async (event) => {
      events.push(event);
      return { statusCode: 204 };
    });
    const response = await fetch(`${url}/a/b?c=d`, { method: 'PUT', headers: { 'x-one': '1' }, body: 'text' });
    expect(response.status).toBe(204);
    expect(events[0]).toMatchObject({
      version: '2.0',
      rawPath: '/a/b',
      rawQueryString: 'c=d',
      headers: { 'x-one': '1' },
      requestContext: { http: { method: 'PUT', path: '/a/b' } },
      body: Buffer.from('text').toString('base64'),
      isBase64Encoded: true,
    });
  });

  it('answers 502 for a handler that throws, as Lambda does, and logs the error', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const url = await serve(async () => {
      throw new Error('the function crashed');
    });
    const response = await fetch(`${url}/webhooks`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(502);
    expect(logged).toHaveBeenCalledWith(new Error('the function crashed'));
    logged.mockRestore();
  });
});
