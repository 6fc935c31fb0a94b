/**
 * Koa receiving the service's webhooks: PORT and WEBHOOK_SECRET from the environment,
 * 127.0.0.1:PORT, POST /webhooks, one JSON line on stdout per handler run.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-koa start
 */
import { createReceiver } from '@hookline/core';
import { webhookMiddleware } from '@hookline/koa';
import Router from '@koa/router';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';

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

const app = new Koa();
// The webhook router comes before bodyParser(): the parser would consume the bytes the signature covers.
const webhooks = new Router().post('/webhooks', webhookMiddleware(receiver));
app.use(webhooks.routes());
app.use(bodyParser());
const api = new Router().get('/health', (ctx) => {
  ctx.body = { ok: true };
});
app.use(api.routes());

const server = app.listen(port, '127.0.0.1', () => {
  console.error(`hookline Koa example listening on http://127.0.0.1:${port}/webhooks`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
