// Every example runs as a user starts it and serves one signed delivery (node-http is no longer the
// demo's, so it is smoke-tested here like the others).
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_SECRET, type RunningExample, startExample } from './support/run-example';

function signedDelivery() {
  const deliveryId = `wdl_${randomBytes(12).toString('hex')}`;
  const now = new Date().toISOString();
  const body = Buffer.from(
    `{"event":"message.delivered","deliveryId":"${deliveryId}","timestamp":"${now}",` +
      `"data":{"messageId":"msg_smoke","from":"+12025550101","to":"+12025550143","lineId":"lin_smoke","deliveredAt":"${now}","note":"ünï"}}`,
  );
  const headers = {
    'content-type': 'application/json',
    'x-service-signature': createHmac('sha256', EXAMPLE_SECRET).update(body).digest('hex'),
    'x-service-event': 'message.delivered',
    'x-service-delivery-id': deliveryId,
  };
  return { deliveryId, body: new Uint8Array(body), headers };
}

describe.each(['express', 'hono', 'fastify', 'next', 'node-http', 'koa', 'h3', 'nestjs', 'observability', 'lambda'])(
  'examples/%s',
  (name) => {
    let example: RunningExample;
    beforeAll(async () => {
      example = await startExample(name);
    }, 120_000);
    afterAll(async () => {
      await example?.stop();
    });

    it('answers a signed delivery 200 and prints one JSON line for it; a repeat prints nothing', async () => {
      const delivery = signedDelivery();
      const first = await fetch(example.url, { method: 'POST', body: delivery.body, headers: delivery.headers });
      expect(first.status).toBe(200);
      expect(await example.lineFor(delivery.deliveryId)).toEqual({ event: 'message.delivered', deliveryId: delivery.deliveryId });
      const again = await fetch(example.url, { method: 'POST', body: delivery.body, headers: delivery.headers });
      expect(await again.json()).toEqual({ ok: true, duplicate: true });
      expect(example.lines().filter((line) => line.deliveryId === delivery.deliveryId)).toHaveLength(1);
    });

    it('refuses a tampered delivery with 401', async () => {
      const delivery = signedDelivery();
      const at = delivery.body.length - 3;
      delivery.body[at] = delivery.body[at]! ^ 1;
      const answer = await fetch(example.url, { method: 'POST', body: delivery.body, headers: delivery.headers });
      expect(answer.status).toBe(401);
    });
  },
);
