/**
 * Express receiving the service's webhooks, observed with OpenTelemetry: PORT and WEBHOOK_SECRET from
 * the environment, 127.0.0.1:PORT, POST /webhooks, one JSON line on stdout per handler run (with the
 * trace it ran in). Spans and metrics go to the console, or to a collector (README.md).
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-observability start
 */
import { createReceiver } from '@hookline/core';
import { webhookHandler } from '@hookline/express';
import { trace } from '@opentelemetry/api';
import express from 'express';
import { shutdownTelemetry } from './telemetry';

const port = Number(process.env.PORT ?? 3000);
const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
  process.exit(2);
}

const tracer = trace.getTracer('example-observability');
const receiver = createReceiver({ secret });

receiver.on('*', async (delivery) => {
  // The delivery span is active here: this span is its child, in the same trace as the HTTP request.
  await tracer.startActiveSpan('record the delivery', async (span) => {
    span.setAttribute('app.event', delivery.event);
    await new Promise((resolve) => setImmediate(resolve)); // stands for the real work (a database write…)
    span.end();
  });
  const traceId = trace.getActiveSpan()?.spanContext().traceId;
  process.stdout.write(`${JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId, traceId })}\n`);
});
receiver.onError((error, info) => {
  console.error(`[${info.phase}] ${info.delivery?.deliveryId ?? ''} ${error instanceof Error ? error.message : String(error)}`);
});

const app = express();
// The webhook route comes before express.json(): it needs the raw bytes the signature covers.
app.post('/webhooks', webhookHandler(receiver));
app.use(express.json());

const server = app.listen(port, '127.0.0.1', () => {
  console.error(`hookline observability example listening on http://127.0.0.1:${port}/webhooks`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => server.close(() => void shutdownTelemetry().then(() => process.exit(0))));
}
