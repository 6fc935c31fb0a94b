/**
 * The worker process: runs the handlers of queued deliveries, CONCURRENCY at a time (default 10).
 * Start as many as you like, on any machines: a delivery's handlers run to success once between them.
 *
 *   WEBHOOK_SECRET=whsec_demo pnpm --filter example-queue-pg-boss start:worker
 */
import { pool, queue, receiver } from './receiver';

const worker = receiver.work({ concurrency: Number(process.env.CONCURRENCY ?? 10) });
console.error(`worker (pid ${process.pid}) consuming`);

// SIGTERM (a deploy, a scale-down): take no new job, let the running ones finish, then exit. A job
// cut short by SIGKILL instead is retried by pg-boss once it expires (expireInMs).
let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await worker.close();
  await queue.close().catch(() => {});
  await pool.end().catch(() => {});
  process.exit(0);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stop());
process.on('message', (message) => message === 'stop' && void stop());
