/**
 * h3 v2 receiving the service's webhooks: PORT and WEBHOOK_SECRET from the environment,
 * 127.0.0.1:PORT, POST /webhooks, one JSON line on stdout per handler run. In Nuxt the same handler is
 * the default export of server/api/webhooks.post.ts (see packages/h3/README.md).
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-h3 start
 */
import { createServer } from 'node:http';
import { createReceiver } from '@hookline/core';
import { webhookHandler } from '@hookline/h3';
import { H3, toNodeHandler } from 'h3';

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

const app = new H3().post('/webhooks', webhookHandler(receiver)).get('/health', () => ({ ok: true }));

const server = createServer(toNodeHandler(app)).listen(port, '127.0.0.1', () => {
  console.error(`hookline h3 example listening on http://127.0.0.1:${port}/webhooks`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
