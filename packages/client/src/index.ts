// The client
export { createServiceClient, type ServiceClient, type ServiceClientOptions } from './create-service-client';
export type { WebhooksResource } from './webhooks';
export type { CallOptions, RetryInfo } from './transport';
export type { ServiceMode } from './api-key';

// The "did you mean" of a mistyped event name (the client's own checks and the CLI use it)
export { closestName, closestEventName } from './closest-name';

// Errors
export { ServiceError, type ServiceErrorCode, type ServiceErrorInit } from './service-error';

// What the operations take and return
export type {
  Webhook,
  CreatedWebhook,
  CreateWebhookInput,
  UpdateWebhookInput,
  DeliveryAttemptRecord,
  AttemptStatus,
  ListResult,
  ReplayResult,
} from './types';
