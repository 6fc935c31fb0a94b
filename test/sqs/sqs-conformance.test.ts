// @hookline/sqs passes the queue conformance suite against the SQS test server (its own process, a
// free port): a standard queue and a FIFO queue, each with a store for its job records, consumed by
// long-polling workers (receiver.work()). The server delivers at least once, as SQS does: now and then
// a deleted message comes back (seeded). sqs-lambda.test.ts drives the Lambda consumer.
import { memoryStore } from '@hookline/core';
import { sqsQueue } from '@hookline/sqs';
import { describeQueueConformance } from '@hookline/testing/conformance';
import { afterAll, beforeAll } from 'vitest';
import { type RunningSqsServer, startSqsServer } from '../support/sqs-server/start';
import { testQueues } from './support/sqs-queues';

let server: RunningSqsServer;
beforeAll(async () => {
  server = await startSqsServer({ duplicateRate: 0.05, seed: 2 });
});
afterAll(async () => {
  await server?.stop();
});

for (const fifo of [false, true]) {
  // SQS delays in whole seconds, so retries and waits take a second each: a longer bound than the default.
  describeQueueConformance(
    `sqsQueue (${fifo ? 'FIFO' : 'standard'} queue)`,
    async ({ attempts, retryDelayMs, visibilityTimeoutMs }) => {
      const queues = await testQueues(server, { fifo });
      const queue = sqsQueue({
        client: queues.client,
        queueUrl: queues.queueUrl,
        store: memoryStore(),
        attempts,
        backoff: { type: 'fixed', delayMs: retryDelayMs },
        // Renewed while a job runs: the suite's handlers run past it.
        ...(visibilityTimeoutMs === undefined ? {} : { visibilityTimeoutMs }),
        onError: () => {},
      });
      return { queue, addCorruptJob: (deliveryId) => queues.sendCorrupt(deliveryId), cleanup: () => queues.remove() };
    },
    { timeoutMs: 30_000 },
  );
}
