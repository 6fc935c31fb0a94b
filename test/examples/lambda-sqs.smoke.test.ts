// examples/lambda-sqs runs as a user starts it locally (`pnpm start`: the web function behind a
// Function URL stand-in, the worker function behind an event source mapping stand-in), against the
// SQS test server: a signed delivery is answered 202 queued before its slow handler ran, the worker
// runs it once, a repeat is a duplicate.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type RunningSqsServer, startSqsServer } from '../support/sqs-server/start';
import { type TestQueues, testQueues } from '../sqs/support/sqs-queues';
import { expectQueuedThenHandledOnce } from './support/answer-fast';
import { type RunningExample, startExample } from './support/run-example';

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

describe('examples/lambda-sqs', () => {
  it('answers 202 queued before the handler ran, runs it once in the worker function, and answers a repeat as a duplicate', async () => {
    const running = example as RunningExample;
    await expectQueuedThenHandledOnce(running);
  }, 30_000);
});
