/**
 * Express receiving the service's webhooks: PORT and WEBHOOK_SECRET from the environment,
 * 127.0.0.1:PORT, POST /webhooks, one JSON line on stdout per handler run.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-express start
 */
import { createReceiver } from '@hookline/core';
import { webhookHandler } from '@hookline/express';
import express from 'express';

const port = Number(process.env.PORT ?? 3000);
const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
  process.exit(2);
}

const receiver = createReceiver({ secret });
receiver.on('message.delivered', async ({ data }) => {
  // data is typed: messageId, from, to, lineId, deliveredAt. Do the real work here, then return.
  void data.messageId;
});
// Every event, logged as one JSON line. Two demo-only fields (`npm run demo` sends them):
// `data.demoFailTimes: N` makes this handler throw on the first N attempts, `data.demoDelayMs` keeps it
// busy, so the demo can show retries and in-flight duplicates.
receiver.on('*', async (delivery, context) => {
  const { demoFailTimes, demoDelayMs } = delivery.data as { demoFailTimes?: number; demoDelayMs?: number };
  if (typeof demoDelayMs === 'number') await new Promise((resolve) => setTimeout(resolve, demoDelayMs));
  if (typeof demoFailTimes === 'number' && context.attempt <= demoFailTimes) {
    throw new Error(`demo: failing attempt ${context.attempt} of ${demoFailTimes}`);
  }
  process.stdout.write(`${JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId })}\n`);
});
// A handler that throws is answered 500 and retried by the service; log it on stderr.
receiver.onError((error, info) => {
  console.error(`[${info.phase}] ${info.delivery?.deliveryId ?? ''} ${error instanceof Error ? error.message : String(error)}`);
});

const app = express();
// The webhook route comes before express.json(): it needs the raw bytes the signature covers.
// app.all: POST carries deliveries; any other method gets hookline's 405 (Allow: POST).
app.all('/webhooks', webhookHandler(receiver));
app.use(express.json());
app.get('/health', (_req, res) => void res.json({ ok: true }));

const server = app.listen(port, '127.0.0.1', () => {
  console.error(`hookline Express example listening on http://127.0.0.1:${port}/webhooks`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
