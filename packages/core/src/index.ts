// @hookline/core: what an application author uses. Adapter and store authors find the building
// blocks (body readers, the node bridge's parts, refusals, the envelope parser) in @hookline/core/adapter.

// The receiver
export { createReceiver, type Receiver } from './receiver';
export type { ReceiverInput, ReceiverEndpoint } from './endpoint';
export type { ReceiverOptions } from './options';
export type { SecretValue, SecretResolver, SecretRequest } from './secrets';
export type { Handler } from './dispatch';
export type { HandlerContext } from './context';
export type { ReceiverHooks, ErrorListener, ErrorInfo, AnyDelivery } from './hooks';
export { createNodeHandler, type NodeHandlerOptions, type NodeRequest, type LingerOptions } from './node-handler';

// Answers and errors
export type { ReceiverAnswer } from './answers';
export { HooklineError, PermanentFailure, LeaseLostError, type HooklineErrorCode, type ErrorDetails } from './errors';

// Verification on its own
export { verifySignature } from './verify';
export type { HeadersInput, IncomingHeaders } from './headers';

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

// Idempotency stores
export type { IdempotencyStore, ClaimResult, Awaitable } from './store';
export type { DeliveryQueue, QueuedDelivery, DeadLetter } from './queue';
export { memoryStore, type MemoryStore, type MemoryStoreOptions } from './memory-store';
