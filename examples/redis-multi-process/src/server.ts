/**
 * One receiver process with the Redis store. src/main.ts starts two of these (PORT and PORT+1); any
 * number of them, on any machines, pointed at the same Redis and prefix, run each delivery's handlers
 * once between them. Alone it follows the examples' convention: PORT and WEBHOOK_SECRET from the
 * environment, 127.0.0.1:PORT, POST /webhooks, one JSON line on stdout per handler run.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-redis-multi-process start:one
 *
 * REDIS_URL (default redis://127.0.0.1:6379) and REDIS_PREFIX (default 'hookline-example:') choose
 * where the de-duplication records live: processes that must agree need the same two values.
 */
import http from 'node:http';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { redisStore } from '@hookline/redis';
import { createClient } from 'redis';

const port = Number(process.env.PORT ?? 3000);
const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
  process.exit(2);
}
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

// No offline queue: while Redis is away a claim fails at once, the receiver answers 503 without
// running handlers, and the service retries later (fail closed) instead of the request hanging. A
// Redis that hangs without closing the connection is bounded by the receiver (storeTimeoutMs, 5 s).
// Reconnect after a lost connection, but give up at start-up: a wrong REDIS_URL should be an exit.
let everConnected = false;
const client = createClient({
  url: redisUrl,
  disableOfflineQueue: true,
  socket: { connectTimeout: 2_000, reconnectStrategy: (retries, cause) => (everConnected ? Math.min(100 * retries, 2_000) : cause) },
});
client.on('error', (error: Error) => console.error(`[redis] ${error.message}`));
try {
  await client.connect();
  everConnected = true;
} catch (error) {
  console.error(`Cannot reach Redis at ${redisUrl}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

const store = redisStore({ client, prefix: process.env.REDIS_PREFIX ?? 'hookline-example:' });
const receiver = createReceiver({ secret, store });

// The handler runs in whichever process claimed the delivery first; `port` says which one it was.
receiver.on('*', (delivery) => {
  process.stdout.write(`${JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId, port })}\n`);
});
// Errors go to stderr so stdout stays one line per handler run.
receiver.onError((error, info) => {
  console.error(`[${info.phase}] ${info.delivery?.deliveryId ?? ''} ${error instanceof Error ? error.message : String(error)}`);
});

const server = http.createServer(createNodeHandler(receiver, { path: '/webhooks' }));
server.listen(port, '127.0.0.1', () => {
  console.error(`hookline Redis example (pid ${process.pid}) listening on http://127.0.0.1:${port}/webhooks`);
  process.send?.({ listening: port }); // tells src/main.ts, when it started this process
});

// Stop taking requests, let the ones in flight finish, then let go of Redis (the store never closes it).
let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  server.close(() => {
    client
      .close()
      .catch(() => {})
      .finally(() => process.exit(0));
  });
  server.closeIdleConnections();
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, stop);
// src/main.ts asks over IPC too: a signal sent to the launcher alone must still reach this process.
process.on('message', (message) => {
  if (message === 'stop') stop();
});
