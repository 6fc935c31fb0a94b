// examples/lambda-sqs runs as a user starts it locally (`pnpm start`: the web function behind a
// Function URL stand-in). With only PORT and WEBHOOK_SECRET set it runs on the in-memory queue, the
// worker in the same process: a signed delivery is answered 202 queued, handled once, and a repeat is
// a duplicate. With QUEUE_URL set it runs on that queue (here the SQS test server), the worker function
// behind an event source mapping stand-in: the same, and the 202 comes before the slow handler ran.
// A set-up it cannot start with ends in one line that says what to set, not a stack trace.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSqsServer, startSqsServer } from '../support/sqs-server/start';
import { type TestQueues, testQueues } from '../sqs/support/sqs-queues';
import { expectQueuedThenHandledOnce, post } from './support/answer-fast';
import { EXAMPLE_SECRET, type RunningExample, startExample } from './support/run-example';
import { createDelivery, createSignedPayload } from '@hookline/testing';

const folder = fileURLToPath(new URL('../../examples/lambda-sqs', import.meta.url));

/** `pnpm start` with only `env` (and PATH, HOME) set, to its end: exit code and everything printed. */
function startToEnd(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn('pnpm', ['--silent', 'start'], {
    cwd: folder,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })));
}

describe('examples/lambda-sqs with only PORT and WEBHOOK_SECRET set: the in-memory queue', () => {
  let example: RunningExample | undefined;
  beforeAll(async () => {
    example = await startExample('lambda-sqs', { inheritEnv: false });
  }, 120_000);
  afterAll(async () => {
    await example?.stop();
  });

  it('answers 202 queued, runs the handler once in this process, and answers a repeat as a duplicate', async () => {
    const running = example as RunningExample;
    const payload = createSignedPayload(createDelivery('message.delivered'), EXAMPLE_SECRET);
    const deliveryId = payload.headers['x-service-delivery-id'] as string;
    expect(await post(running.url, payload)).toEqual({ status: 202, body: { ok: true, queued: true } });
    expect(await running.lineFor(deliveryId)).toEqual({ event: 'message.delivered', deliveryId });
    expect(await post(running.url, payload)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    expect(running.lines().filter((line) => line.deliveryId === deliveryId)).toHaveLength(1);
  }, 30_000);
});

describe('examples/lambda-sqs on an SQS queue (QUEUE_URL set)', () => {
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

  it('answers 202 queued before the handler ran, runs it once in the worker function, and answers a repeat as a duplicate', async () => {
    await expectQueuedThenHandledOnce(example as RunningExample);
  }, 30_000);
});

describe('examples/lambda-sqs, started without what it needs', () => {
  /** The example's own line (the AWS SDK may warn about the Node version before it). */
  const ownLines = (output: string) => output.split('\n').filter((line) => line.startsWith('example-lambda-sqs:'));

  it('without WEBHOOK_SECRET: one line saying to set it, exit code 1', async () => {
    const { code, output } = await startToEnd({ PORT: '0' });
    expect(code).toBe(1);
    expect(output.trim()).toBe(
      'example-lambda-sqs: set WEBHOOK_SECRET to the signingSecret of your webhook (any whsec_… value to try it locally)',
    );
  }, 60_000);

  it('with QUEUE_URL but no AWS region or credentials: one line naming what to set, no stack trace, exit code 1', async () => {
    const { code, output } = await startToEnd({
      PORT: '0',
      WEBHOOK_SECRET: EXAMPLE_SECRET,
      QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/hookline',
    });
    expect(code).toBe(1);
    const [line, ...more] = ownLines(output);
    expect(more).toEqual([]);
    expect(line).toMatch(
      /^example-lambda-sqs: cannot reach the queue at QUEUE_URL \(Region is missing\): set AWS_REGION and credentials .* or unset QUEUE_URL/,
    );
    expect(output).not.toMatch(/^\s+at /m);
  }, 60_000);
});
