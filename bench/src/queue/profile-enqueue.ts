/**
 * Profiling aid, not a suite: enqueues `count` deliveries on BullMQ, 50 at a time, so
 * `node --cpu-prof --import tsx src/queue/profile-enqueue.ts 20000` from `bench/` shows where an
 * enqueue's CPU goes. Deletes its queue at the end.
 */
import { randomBytes } from 'node:crypto';
import { bullmqQueue } from '@hookline/bullmq';
import { createDelivery } from '@hookline/testing';

const count = Number(process.argv[2] ?? 20_000);
const queue = bullmqQueue({
  connection: { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
  name: `hookline-profile-${randomBytes(4).toString('hex')}`,
});
const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: 50 }, async () => {
    while (next < count) {
      next++;
      await queue.enqueue({ delivery: createDelivery('message.inbound'), receivedAt: Date.now(), secretIndex: 0 });
    }
  }),
);
const ms = performance.now() - started;
const cpu = process.cpuUsage();
process.stderr.write(
  `${count} enqueues in ${ms.toFixed(0)} ms (${((count / ms) * 1000).toFixed(0)}/s), ${((cpu.user + cpu.system) / count).toFixed(1)} µs CPU each (start-up included)\n`,
);
await queue.queue.obliterate({ force: true });
await queue.close();
