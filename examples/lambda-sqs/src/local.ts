/**
 * Both functions on your machine. 127.0.0.1:PORT turns each request into a Function URL event for the
 * web function. Without QUEUE_URL the queue is in memory (memoryQueue, and the memory store) and the
 * worker runs in this process: nothing else to set up. With QUEUE_URL, the queue is that SQS queue (in
 * your account, or on an SQS-compatible server at AWS_ENDPOINT_URL_SQS) and a loop plays the event
 * source mapping for the worker function: it long-polls the queue, invokes the worker with the records
 * as Lambda delivers them, and deletes those the worker did not list in batchItemFailures.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-lambda-sqs start
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo QUEUE_URL=https://sqs.eu-west-1.amazonaws.com/…/hookline pnpm --filter example-lambda-sqs start
 */
import { serveFunctionUrl } from '@hookline/aws-lambda/local';

const NAME = 'example-lambda-sqs';
const port = Number(process.env.PORT ?? 3000);

/** A start-up problem the user fixes by setting something: printed as one line, then exit 1. */
class SetUpError extends Error {}

async function start(): Promise<() => Promise<void>> {
  if (!process.env.WEBHOOK_SECRET)
    throw new SetUpError('set WEBHOOK_SECRET to the signingSecret of your webhook (any whsec_… value to try it locally)');
  return process.env.QUEUE_URL ? startOnSqs(process.env.QUEUE_URL) : startInMemory();
}

/** The in-memory queue: the web function's receiver enqueues, receiver.work() in this process runs the jobs. */
async function startInMemory(): Promise<() => Promise<void>> {
  const [{ webhookHandler }, { createReceiver, memoryStore }, { memoryQueue }, { addHandlers, MAX_RUN_MS }] = await Promise.all([
    import('@hookline/aws-lambda'),
    import('@hookline/core'),
    import('@hookline/testing'),
    import('./handlers'),
  ]);
  const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET, store: memoryStore(), queue: memoryQueue(), maxRunMs: MAX_RUN_MS });
  addHandlers(receiver);
  const server = await serveFunctionUrl(webhookHandler(receiver), { port });
  const worker = receiver.work({ concurrency: 10 });
  console.error(`${NAME}: http://127.0.0.1:${port}/webhooks, on an in-memory queue (set QUEUE_URL to use an SQS queue)`);
  return async () => {
    server.close();
    await worker.close();
  };
}

/** A real SQS queue: the two functions, and the event source mapping played by a polling loop. */
async function startOnSqs(queueUrl: string): Promise<() => Promise<void>> {
  const { GetQueueAttributesCommand, SQSClient } = await import('@aws-sdk/client-sqs');
  const sqs = new SQSClient({});
  let arn: string;
  try {
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
    arn = Attributes?.QueueArn ?? '';
  } catch (error) {
    throw new SetUpError(
      `cannot reach the queue at QUEUE_URL (${(error as Error).message}): set AWS_REGION and credentials ` +
        '(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE), and AWS_ENDPOINT_URL_SQS for an SQS-compatible server; ' +
        'or unset QUEUE_URL to run on an in-memory queue',
    );
  }
  const [{ handler: web }, { handler: worker }, { pollLikeEventSourceMapping }] = await Promise.all([
    import('./web'),
    import('./worker'),
    import('./event-source-mapping'),
  ]);
  const server = await serveFunctionUrl(web, { port });
  const polling = new AbortController();
  const mapped = pollLikeEventSourceMapping({ sqs, queueUrl, arn, worker, signal: polling.signal });
  console.error(`${NAME}: http://127.0.0.1:${port}/webhooks, on the SQS queue ${queueUrl}`);
  return async () => {
    polling.abort();
    server.close();
    await mapped;
  };
}

try {
  const stop = await start();
  process.once('SIGTERM', () => void stop().finally(() => process.exit(0)));
  process.once('SIGINT', () => void stop().finally(() => process.exit(0)));
} catch (error) {
  console.error(`${NAME}: ${error instanceof SetUpError ? error.message : ((error as Error).stack ?? String(error))}`);
  process.exit(1);
}
