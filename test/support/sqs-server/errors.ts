// SQS's error shapes in the AWS JSON 1.0 protocol: HTTP status, a body whose `__type` names the error
// shape (`com.amazonaws.sqs#QueueDoesNotExist`) with a `message`, and the `x-amzn-query-error` header
// carrying the code the older query protocol used (`AWS.SimpleQueueService.NonExistentQueue;Sender`),
// which the SDKs read back so that an error keeps its old name under either protocol.

/** An error the server answers with, in SQS's shape. */
export class SqsError extends Error {
  constructor(
    /** The error shape's name in the service model (`QueueDoesNotExist`). */
    readonly shape: string,
    message: string,
    /** The query protocol's code, when it differs from the shape name. */
    readonly queryCode: string = shape,
    readonly status = 400,
  ) {
    super(message);
  }
}

// The errors the service model declares with a query code of their own (status 400 unless given).
export const queueDoesNotExist = () =>
  new SqsError('QueueDoesNotExist', 'The specified queue does not exist.', 'AWS.SimpleQueueService.NonExistentQueue');
export const queueNameExists = (name: string) =>
  new SqsError(
    'QueueNameExists',
    `A queue already exists with the same name and a different value for attribute(s): ${name}`,
    'QueueAlreadyExists',
  );
export const queueDeletedRecently = () =>
  new SqsError(
    'QueueDeletedRecently',
    'You must wait 60 seconds after deleting a queue before you can create another queue with the same name.',
    'AWS.SimpleQueueService.QueueDeletedRecently',
  );
export const receiptHandleIsInvalid = (handle: string) =>
  new SqsError(
    'ReceiptHandleIsInvalid',
    `The input receipt handle "${handle}" is not a valid receipt handle.`,
    'ReceiptHandleIsInvalid',
    404,
  );
export const messageNotInflight = () =>
  new SqsError('MessageNotInflight', 'The message referred to is not in flight.', 'AWS.SimpleQueueService.MessageNotInflight');
export const purgeQueueInProgress = (name: string) =>
  new SqsError(
    'PurgeQueueInProgress',
    `Only one PurgeQueue operation on ${name} is allowed every 60 seconds.`,
    'AWS.SimpleQueueService.PurgeQueueInProgress',
    403,
  );
export const emptyBatchRequest = () =>
  new SqsError('EmptyBatchRequest', 'There should be at least one entry in the request.', 'AWS.SimpleQueueService.EmptyBatchRequest');
export const tooManyEntriesInBatchRequest = (count: number) =>
  new SqsError(
    'TooManyEntriesInBatchRequest',
    `Maximum number of entries per request are 10. You have sent ${count}.`,
    'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
  );
export const batchEntryIdsNotDistinct = (id: string) =>
  new SqsError('BatchEntryIdsNotDistinct', `Id ${id} repeated.`, 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct');
export const invalidBatchEntryId = () =>
  new SqsError(
    'InvalidBatchEntryId',
    'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
    'AWS.SimpleQueueService.InvalidBatchEntryId',
  );
export const batchRequestTooLong = (bytes: number, max: number) =>
  new SqsError(
    'BatchRequestTooLong',
    `Batch requests cannot be longer than ${max} bytes. You have sent ${bytes} bytes.`,
    'AWS.SimpleQueueService.BatchRequestTooLong',
  );
export const overLimit = (message: string) => new SqsError('OverLimit', message, 'OverLimit', 403);
export const unsupportedOperation = (message: string) =>
  new SqsError('UnsupportedOperation', message, 'AWS.SimpleQueueService.UnsupportedOperation');

// Shapes without a query code of their own.
export const invalidAttributeName = (name: string) => new SqsError('InvalidAttributeName', `Unknown Attribute ${name}.`);
export const invalidAttributeValue = (message: string) => new SqsError('InvalidAttributeValue', message);
export const invalidMessageContents = () =>
  new SqsError('InvalidMessageContents', 'Invalid characters found. Deleted message contains characters outside the allowed set.');

// The API reference's common errors.
export const invalidParameterValue = (message: string) => new SqsError('InvalidParameterValue', message);
export const missingParameter = (name: string) => new SqsError('MissingParameter', `The request must contain the parameter ${name}.`);
export const invalidAction = (action: string) => new SqsError('InvalidAction', `The action ${action} is not valid for this endpoint.`);

/** The body and headers of an error answer. */
export function errorAnswer(error: SqsError): { status: number; headers: Record<string, string>; body: string } {
  return {
    status: error.status,
    headers: { 'x-amzn-query-error': `${error.queryCode};Sender` },
    body: JSON.stringify({ __type: `com.amazonaws.sqs#${error.shape}`, message: error.message }),
  };
}
