/**
 * Hono (on Node via @hono/node-server) receiving the service's webhooks: PORT and WEBHOOK_SECRET
 * from the environment, 127.0.0.1:PORT, POST /webhooks, one JSON line on stdout per handler run.
 * The same `app` runs unchanged on Bun, Deno and Cloudflare Workers.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-hono start
 */
import { serve } from '@hono/node-server';
import { createReceiver } from '@hookline/core';
import { webhookHandler } from '@hookline/hono';
import { Hono } from 'hono';

const port = Number(process.env.PORT ?? 3000);
const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
  process.exit(2);
}

const receiver = createReceiver({ secret });
receiver.on('*', (delivery) => {
  process.stdout.write(`${JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId })}\n`);
});
receiver.onError((error, info) => console.error(`[${info.phase}]`, error));

const app = new Hono();
// app.all: POST carries deliveries; any other method gets hookline's 405 (Allow: POST).
app.all('/webhooks', webhookHandler(receiver));

const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => {
  console.error(`hookline Hono example listening on http://127.0.0.1:${port}/webhooks`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
