// sqsHandler() fits Lambda's own types: the handler is an SQSHandler, the event an SQSEvent.
import type { SQSBatchResponse, SQSEvent, SQSHandler } from 'aws-lambda';
import { expectTypeOf, test } from 'vitest';
import { sqsHandler } from './sqs-handler';

test('sqsHandler is an SQSHandler answering an SQSBatchResponse', () => {
  const handler = sqsHandler({});
  expectTypeOf(handler).toExtend<SQSHandler>();
  expectTypeOf<SQSEvent>().toExtend<Parameters<typeof handler>[0]>();
  expectTypeOf<Awaited<ReturnType<typeof handler>>>().toExtend<SQSBatchResponse>();
});
