// The client
export { createServiceClient, type ServiceClient, type ServiceClientOptions } from './create-service-client';
export type { WebhooksResource } from './webhooks';
export type { CallOptions, RetryInfo } from './transport';
export type { ServiceMode } from './api-key';

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
