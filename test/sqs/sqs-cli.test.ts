// `hookline queue` with the SQS backend, against the SQS test server: the queue chosen by
// SQS_QUEUE_URL alone, the dead letters listed, one replayed by deliveryId, then all.
import { randomBytes } from 'node:crypto';
import { run } from '@hookline/cli';
import type { QueuedDelivery } from '@hookline/core/adapter';
import { memoryStore } from '@hookline/core';
import { sqsQueue } from '@hookline/sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningSqsServer, startSqsServer } from '../support/sqs-server/start';
import { type TestQueues, testQueues } from './support/sqs-queues';

let server: RunningSqsServer;
let queues: TestQueues;
beforeAll(async () => {
  server = await startSqsServer();
  queues = await testQueues(server);
});
afterAll(async () => {
  await queues?.remove();
  await server?.stop();
});

async function cli(argv: string[]) {
  const out = { stdout: '', stderr: '' };
  const env = {
    NO_COLOR: '1',
    SQS_QUEUE_URL: queues.queueUrl,
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_SQS: server.endpoint,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  };
  const code = await run(['queue', ...argv], {
    stdout: { write: (chunk: string) => (out.stdout += chunk) },
    stderr: { write: (chunk: string) => (out.stderr += chunk) },
    stdin: (async function* () {})(),
    env,
  });
  return { code, ...out };
}

function queued(): QueuedDelivery {
  const deliveryId = `wdl_${randomBytes(12).toString('hex')}`;
  return {
    delivery: { event: 'call.completed', deliveryId, timestamp: new Date().toISOString(), data: { callId: 'cal_1' } },
    receivedAt: Date.now(),
    secretIndex: 0,
  };
}

describe('hookline queue (SQS)', () => {
  it('lists the dead letters, replays one by deliveryId, then all', async () => {
    // The worker's queue has a store (consuming needs one); the CLI's has none.
    const queue = sqsQueue({ client: queues.client, queueUrl: queues.queueUrl, store: memoryStore(), onError: () => {} });
    const jobs = [queued(), queued(), queued()];
    for (const job of jobs) await queue.enqueue(job);
    const worker = queue.work(async () => ({ status: 'dead', reason: 'PermanentFailure: no such call' }), { concurrency: 3 });
    await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(3), { timeout: 20_000, interval: 200 });
    await worker.close();

    const table = await cli(['dead-letters']);
    expect(table.code).toBe(0);
    for (const job of jobs) expect(table.stdout).toContain(job.delivery.deliveryId);
    expect(table.stdout).toMatch(/call\.completed\s+1\s+\S+Z\s+PermanentFailure: no such call/);
    expect(table.stdout).toContain('3 dead letters.');

    const first = jobs[0]?.delivery.deliveryId as string;
    const one = await cli(['replay', first]);
    expect(one).toMatchObject({ code: 0, stdout: `Replayed ${first}: it is back in the queue.\n` });
    expect((await cli(['replay', first])).code).toBe(1);
    const all = await cli(['replay', '--all', '--json']);
    expect(JSON.parse(all.stdout)).toEqual({ replayed: 2 });
    expect((await cli(['dead-letters', '--json'])).stdout.trim()).toBe('[]');
  });
});
