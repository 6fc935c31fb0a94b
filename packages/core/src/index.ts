// The receiver
export { createReceiver, type Receiver, type ReceiverInput, type ReceiverEndpoint } from './receiver';
export type { ReceiverOptions, SecretValue, SecretResolver, SecretRequest } from './options';
export { MIN_RETENTION_MS, SERVICE_TIMEOUT_MS } from './options';
export type { Handler } from './dispatch';
export type { HandlerContext } from './context';
export type { ReceiverHooks, ErrorListener, ErrorInfo, AnyDelivery } from './hooks';

// Answers and errors
export { type ReceiverAnswer, errorAnswer } from './answers';
export { HooklineError, PermanentFailure, STATUS_BY_CODE, type HooklineErrorCode, type ErrorDetails } from './errors';

// Verification on its own
export { verifySignature } from './verify';
export { SIGNATURE_HEADER, EVENT_HEADER, DELIVERY_ID_HEADER, readHeader, type HeadersInput, type IncomingHeaders } from './headers';

// The event catalogue and its types
export { EVENT_CATALOGUE, EVENT_NAMES, EVENT_GROUPS, isServiceEventName, type ServiceEventName, type ServiceEventGroup } from './catalogue';
export type {
  ServiceEvents,
  EventMap,
  Delivery,
  DeliveryOf,
  DeliveryFor,
  UnknownDelivery,
  EventPattern,
  GroupPattern,
  OpenData,
  MessageDeliveredData,
  CallCompletedData,
  MessageFailedData,
} from './events';
export { parseEnvelope } from './envelope';

// Idempotency stores
export type { IdempotencyStore, ClaimResult, Awaitable } from './store';
export { memoryStore, type MemoryStore, type MemoryStoreOptions } from './memory-store';

// Bodies and the node:http bridge shared by Node-style adapters
export { readRequestBody } from './body';
export { createNodeHandler, readNodeBody, writeNodeAnswer, type NodeHandlerOptions, type NodeRequest } from './node-handler';
