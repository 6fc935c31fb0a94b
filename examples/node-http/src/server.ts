/**
 * A plain node:http receiver, the convention every example follows: PORT and WEBHOOK_SECRET from the
 * environment, 127.0.0.1:PORT, POST /webhooks, one JSON line on stdout per handler run.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-node-http start
 */
import http from 'node:http';
import { createNodeHandler, createReceiver } from '@hookline/core';

const port = Number(process.env.PORT ?? 3000);
const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
  process.exit(2);
}

const receiver = createReceiver({ secret });

// Demo hooks: `data.demoFailTimes: N` makes the handler throw on the first N attempts, and
// `data.demoDelayMs` keeps it busy, so the demo can show retries and in-flight duplicates.
receiver.on('*', async (delivery, context) => {
  const { demoFailTimes, demoDelayMs } = delivery.data as { demoFailTimes?: number; demoDelayMs?: number };
  if (typeof demoDelayMs === 'number') await new Promise((resolve) => setTimeout(resolve, demoDelayMs));
  if (typeof demoFailTimes === 'number' && context.attempt <= demoFailTimes) {
    throw new Error(`demo: failing attempt ${context.attempt} of ${demoFailTimes}`);
  }
  process.stdout.write(`${JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId })}\n`);
});

// Failures are answered 500 and retried by the service; log them on stderr so stdout stays one line per run.
receiver.onError((error, info) => {
  console.error(`[${info.phase}] ${info.delivery?.deliveryId ?? ''} ${error instanceof Error ? error.message : String(error)}`);
});

const server = http.createServer(createNodeHandler(receiver, { path: '/webhooks' }));
server.listen(port, '127.0.0.1', () => {
  console.error(`hookline node:http example listening on http://127.0.0.1:${port}/webhooks`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
