// examples/lambda-sqs runs as a user starts it locally (`pnpm start`: the web function behind a
// Function URL stand-in, the worker function behind an event source mapping stand-in), against the
// SQS test server: a signed delivery is answered 202 queued before its slow handler ran, the worker
// runs it once, a repeat is a duplicate.
import { createDelivery, createSignedPayload } from '@hookline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSqsServer, startSqsServer } from '../support/sqs-server/start';
import { type TestQueues, testQueues } from '../sqs/support/sqs-queues';
import { EXAMPLE_SECRET, type RunningExample, startExample } from './support/run-example';

let server: RunningSqsServer;
let queues: TestQueues;
let example: RunningExample | undefined;

beforeAll(async () => {
  server = await startSqsServer();
  queues = await testQueues(server);
  example = await startExample('lambda-sqs', {
    env: {
      QUEUE_URL: queues.queueUrl,
      AWS_ENDPOINT_URL_SQS: server.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      HANDLER_MS: '1500',
    },
  });
}, 120_000);
afterAll(async () => {
  await example?.stop();
  await queues?.remove();
  await server?.stop();
}, 60_000);

async function post(url: string, payload: ReturnType<typeof createSignedPayload>) {
  const body = typeof payload.body === 'string' ? payload.body : new Uint8Array(payload.body);
  const response = await fetch(url, { method: 'POST', headers: payload.headers, body });
  return { status: response.status, body: (await response.json()) as unknown };
}

describe('examples/lambda-sqs', () => {
  it('answers 202 queued before the handler ran, runs it once in the worker function, and answers a repeat as a duplicate', async () => {
    const running = example as RunningExample;
    const payload = createSignedPayload(createDelivery('message.delivered'), EXAMPLE_SECRET);
    const deliveryId = payload.headers['x-service-delivery-id'] as string;
    expect(await post(running.url, payload)).toEqual({ status: 202, body: { ok: true, queued: true } });
    // The handler takes 1.5 s: the answer came first.
    expect(running.lines().filter((line) => line.deliveryId === deliveryId)).toEqual([]);
    expect(await running.lineFor(deliveryId)).toEqual({ event: 'message.delivered', deliveryId });
    expect(await post(running.url, payload)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    expect(running.lines().filter((line) => line.deliveryId === deliveryId)).toHaveLength(1);
  }, 30_000);
});
