// @hookline/core/adapter: what adapter and store authors need, and application code does not.
// Adapters read the raw bytes (readNodeBody, readRequestBody), hand them to `receiver.handle()` and
// copy its answer onto their framework's response (writeNodeAnswer, toResponse); answerRequest and
// serveRequest are that sequence for a framework's request, and AdapterOptions the options every
// adapter shares. Every refusal they give before the receiver sees the request is built by the
// functions under "Refusals", so statuses and bodies match the receiver's own. See
// docs/ARCHITECTURE.md in the repository for where each piece sits.

// Bodies and the node:http bridge
export { readRequestBody } from './body';
export { serveRequest, answerRequest, toResponse } from './web-request';
export {
  readNodeBody,
  asNodeRequest,
  writeNodeAnswer,
  lingerOnRefusal,
  type NodeRequest,
  type NodeHandlerOptions,
  type NodeBodyOptions,
  type LingerOptions,
} from './node-handler';
export { type AdapterOptions, routeBodyTimeoutMs } from './adapter-options';

// The service's own API: the code of its error shape for each status (the client and the emulator)
export { serviceErrorCodeFor } from './service-error-codes';

// Answers and refusals
export {
  type ReceiverAnswer,
  refuse,
  payloadTooLarge,
  methodNotAllowed,
  bodyAlreadyParsed,
  notFound,
  requestTimeout,
} from './answers';
export type { HooklineErrorCode, ErrorDetails } from './errors';

// The headers, and the service's schedule (its retries and its 30 s limit per attempt)
export { SIGNATURE_HEADER, EVENT_HEADER, DELIVERY_ID_HEADER, type HeadersInput, type IncomingHeaders } from './headers';
export { RETRY_SCHEDULE_MS, SERVICE_TIMEOUT_MS } from './service-schedule';

// Stores
export {
  StoreDataError,
  StoreNotSetUpError,
  checkVersion,
  type IdempotencyStore,
  type VersionedStore,
  type ClaimResult,
  type Awaitable,
  type TransactionCompletion,
} from './store';
export { DEFAULT_RETENTION_MS, positiveMs, isWellFormed, wellFormedKey, refuseRenamedOptions } from './store-checks';
export { batchQueue, type BatchQueueOptions } from './batch-queue';

// Queue backends (answer-fast mode)
export {
  type DeliveryQueue,
  type QueuedDelivery,
  type QueueJob,
  type JobResult,
  type DeadJobKind,
  type QueueWorker,
  type DeadLetter,
  type DeadLetterRef,
  JobTooLargeError,
  queuedDeliveryJson,
  scopedDeliveryId,
} from './queue';
export { splitScopedId, tenantScope, tenantOfScope } from './store-keys';
export { queueJobEntry, type QueueJobEntry } from './receiver-entry';
export { withinTime } from './within-time';
export { wakeablePause } from './wakeable-pause';
export { waitInWholeSeconds } from './whole-seconds';
export { cutToBytes } from './text-bytes';
export { isPromiseLike } from './awaitable';

// Diagnostics: what the receiver publishes on node:diagnostics_channel, for tracers (types only)
export type { DeliveryTrace, TraceOutcome } from './delivery-trace';
export type { QueueOperationMessage, StoreOperationMessage } from './diagnostics';
