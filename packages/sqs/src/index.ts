// The queue backend: enqueue, dead letters, long-polling workers
export { sqsQueue, type SqsQueueOptions, type SqsDeliveryQueue } from './sqs-queue';
export type { SqsClientLike } from './sqs-client';
// The Lambda consumer behind an SQS event source mapping
export {
  sqsHandler,
  type SqsHandlerOptions,
  type SqsEvent,
  type SqsRecord,
  type SqsBatchResponse,
  type SqsLambdaHandler,
} from './sqs-handler';
