// The AWS deployment shape in one process, for the SQS tests: a web function (webhookHandler, answer-fast)
// and a worker function (sqsHandler behind an event source mapping) over one queue, its dead-letter
// queue and one store, on the SQS test server.
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { webhookHandler } from '@hookline/aws-lambda';
import { createReceiver, type MemoryStore, memoryStore, type Receiver } from '@hookline/core';
import { type SqsDeliveryQueue, type SqsHandlerOptions, type SqsQueueOptions, sqsHandler, sqsQueue } from '@hookline/sqs';
import type { RunningSqsServer } from '../../support/sqs-server/start';
import { eventSourceMapping } from './event-source-mapping';
import { type TestQueues, testQueues } from './sqs-queues';

export const SECRET = 'whsec_sqs_lambda';

export const newId = () => `wdl_${randomBytes(12).toString('hex')}`;

/** A Function URL event (payload 2.0) carrying a signed delivery. */
export function functionUrlEvent(deliveryId: string, data: Record<string, unknown> = {}) {
  const event = JSON.parse(readFileSync(new URL('../../../packages/aws-lambda/fixtures/function-url.json', import.meta.url), 'utf8'));
  const now = new Date().toISOString();
  const body = Buffer.from(
    JSON.stringify({
      deliveryId,
      event: 'message.delivered',
      timestamp: now,
      data: { messageId: 'msg_sqs', lineId: 'lin_sqs', note: 'Grüße 🎉', ...data },
    }),
  );
  event.headers['x-service-signature'] = createHmac('sha256', SECRET).update(body).digest('hex');
  event.headers['x-service-event'] = 'message.delivered';
  event.headers['x-service-delivery-id'] = deliveryId;
  event.body = body.toString('base64');
  event.isBase64Encoded = true;
  return event;
}

export interface DeploymentOptions {
  fifo?: boolean;
  attempts?: number;
  retryMs?: number;
  leaseMs?: number;
  maxRunMs?: number;
  maxStalls?: number;
  /** The web function's queue has no store (the worker's always has one: consuming needs it). */
  webWithoutStore?: boolean;
  /** The queues' VisibilityTimeout, in seconds. */
  visibilityTimeout?: number;
  /** Both queues' MaximumMessageSize, in bytes. */
  maximumMessageSize?: number;
  handler?: SqsHandlerOptions;
  batchSize?: number;
  queue?: Partial<SqsQueueOptions>;
}

export interface Deployment {
  queues: TestQueues;
  queue: SqsDeliveryQueue;
  /** Registers a handler in both functions (the module they share). */
  receiver: Pick<Receiver, 'on'>;
  /** The worker function's receiver. */
  workerReceiver: Receiver;
  web: ReturnType<typeof webhookHandler>;
  worker: ReturnType<typeof eventSourceMapping>;
  /** What the queue reported in the background. */
  errors: Error[];
  store: MemoryStore;
}

/** The two functions over one queue and one store, as deployed (here in one process). */
export async function deployment(server: RunningSqsServer, opened: TestQueues[], options: DeploymentOptions = {}): Promise<Deployment> {
  const queues = await testQueues(server, {
    fifo: options.fifo ?? false,
    ...(options.visibilityTimeout === undefined ? {} : { visibilityTimeout: options.visibilityTimeout }),
    ...(options.maximumMessageSize === undefined ? {} : { maximumMessageSize: options.maximumMessageSize }),
  });
  opened.push(queues);
  const store = memoryStore();
  const errors: Error[] = [];
  const queueOptions: SqsQueueOptions = {
    client: queues.client,
    queueUrl: queues.queueUrl,
    deadLetterQueueUrl: queues.deadLetterQueueUrl,
    store,
    attempts: options.attempts ?? 3,
    backoff: { type: 'fixed', delayMs: options.retryMs ?? 1_000 },
    ...(options.maxStalls === undefined ? {} : { maxStalls: options.maxStalls }),
    onError: (error) => errors.push(error),
    ...options.queue,
  };
  const queue = sqsQueue(queueOptions);
  const receiverOptions = {
    secret: SECRET,
    store,
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    ...(options.maxRunMs === undefined ? {} : { maxRunMs: options.maxRunMs }),
  };
  const receiver = createReceiver({ ...receiverOptions, queue }).onError(() => {});
  const webReceiver = options.webWithoutStore
    ? createReceiver({ ...receiverOptions, queue: sqsQueue({ ...queueOptions, store: undefined }) }).onError(() => {})
    : receiver;
  const web = webhookHandler(webReceiver);
  const worker = eventSourceMapping(queues.client, queues.queueUrl, sqsHandler(receiver, options.handler), {
    ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
  });
  // The same module in both functions: a handler registered is registered in each.
  const on = ((...args: Parameters<typeof receiver.on>) => {
    receiver.on(...args);
    if (webReceiver !== receiver) webReceiver.on(...args);
    return handlers;
  }) as typeof receiver.on;
  const handlers = { on };
  return { queues, queue, receiver: handlers, workerReceiver: receiver, web, worker, errors, store };
}
