// What a run of examples/queue-bullmq writes to the shared Redis: its BullMQ queue and the store's
// keys under REDIS_PREFIX. Each test that starts the example gives both names of its own and deletes
// them here afterwards.
import { type BullmqDeliveryQueue, bullmqQueue } from '@hookline/bullmq';
import { Redis } from 'ioredis';
import { REDIS_URL } from '../../support/servers';

/** A client of the example's queue `name` on the shared Redis (for reading job states, then deleting it). */
export const exampleQueue = (name: string): BullmqDeliveryQueue =>
  bullmqQueue({ connection: { url: REDIS_URL, maxRetriesPerRequest: null }, name, onError: () => {} });

/** Deletes the queue with all its jobs, closes the client, and deletes the store's keys under `prefix`. */
export async function deleteExampleData(queue: BullmqDeliveryQueue, prefix: string): Promise<void> {
  await queue.queue.obliterate({ force: true });
  await queue.close();
  const admin = new Redis(REDIS_URL);
  try {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
  } finally {
    admin.disconnect();
  }
}
