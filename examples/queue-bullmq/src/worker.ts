/**
 * The worker process: runs the handlers of queued deliveries, CONCURRENCY at a time (default 10).
 * Start as many as you like, on any machines: a delivery's handlers run to success once between them.
 *
 *   WEBHOOK_SECRET=whsec_demo pnpm --filter example-queue-bullmq start:worker
 */
import { client, receiver, redisReady } from './receiver';

let worker: ReturnType<typeof receiver.work> | undefined;

// SIGTERM (a deploy, a scale-down): take no new job, let the running ones finish, then exit. A job
// cut short by SIGKILL instead is taken over by another worker once its lock expires. The worker's
// close() closes its connections and this process never enqueues (the queue's own connection is never
// opened), so the store's client is all that is left. process.exit: when started by src/main.ts, the
// IPC channel to it would keep the process alive.
let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await worker?.close();
  client.disconnect();
  process.exit(0);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stop());
process.on('message', (message) => message === 'stop' && void stop());

// Take jobs only once the store can answer (see receiver.ts).
await redisReady();
if (!stopping) {
  worker = receiver.work({ concurrency: Number(process.env.CONCURRENCY ?? 10) });
  console.error(`worker (pid ${process.pid}) consuming`);
}
