/**
 * The web process: POST /webhooks on 127.0.0.1:PORT answers 202 {"ok":true,"queued":true} as soon
 * as the delivery is in the queue; it runs no handler itself.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-queue-bullmq start:web
 */
import http from 'node:http';
import { createNodeHandler } from '@hookline/core';
import { client, queue, receiver, redisReady } from './receiver';

const port = Number(process.env.PORT ?? 3000);
const server = http.createServer(createNodeHandler(receiver, { path: '/webhooks' }));

// SIGTERM: stop taking requests, let those in flight finish their enqueue, then close the connections.
let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  // Not listening yet (stopped while waiting for Redis): close() calls back at once.
  server.close(async () => {
    await queue.close().catch(() => {});
    client.disconnect();
    process.exit(0);
  });
  server.closeIdleConnections();
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, stop);
process.on('message', (message) => message === 'stop' && stop());

// Listen only once the store can answer (see receiver.ts).
await redisReady();
if (!stopping) {
  server.listen(port, '127.0.0.1', () => console.error(`web (pid ${process.pid}) listening on http://127.0.0.1:${port}/webhooks`));
}
