/**
 * Fastify receiving the service's webhooks: PORT and WEBHOOK_SECRET from the environment,
 * 127.0.0.1:PORT, POST /webhooks, one JSON line on stdout per handler run.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-fastify start
 */
import { createReceiver } from '@hookline/core';
import { webhookPlugin } from '@hookline/fastify';
import Fastify from 'fastify';

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

const app = Fastify();
// Encapsulated: the raw-body parser applies to /webhooks only; this JSON route keeps Fastify's parser.
await app.register(webhookPlugin, { receiver, path: '/webhooks' });
app.post('/echo', async (request) => ({ received: request.body }));

await app.listen({ port, host: '127.0.0.1' });
console.error(`hookline Fastify example listening on http://127.0.0.1:${port}/webhooks`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void app.close().then(() => process.exit(0)));
