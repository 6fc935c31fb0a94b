import type { ServiceEventName } from '@hookline/core';

/**
 * A registered webhook as the service answers it. The document gives `url`, `events`, `isActive` and
 * (on create) `signingSecret`; the identifier's name and format and any other field are "not shown",
 * so `id` is this kit's assumption and every other field the service sends is kept as is.
 */
export interface Webhook {
  /** The webhook's identifier, used in `/v1/webhooks/:id`. */
  id: string;
  /** The HTTPS URL the service POSTs deliveries to. */
  url: string;
  /** Subscribed event names. */
  events: string[];
  /** False when switched off without being deleted. */
  isActive: boolean;
  /** Fields the service does not document (timestamps, …), kept as the service sent them. */
  [field: string]: unknown;
}

/** The create answer: the only time the service returns the webhook's signingSecret. */
export interface CreatedWebhook extends Webhook {
  /** Store it (a secret manager, an environment variable): every delivery is verified with it. */
  signingSecret: string;
}

/** Input of `webhooks.create()`. */
export interface CreateWebhookInput {
  /** HTTPS URL (http only for localhost, such as the local emulator). Must answer within 30 s. */
  url: string;
  /** Catalogue event names to subscribe to (at least one). */
  events: readonly ServiceEventName[];
  /** @default true */
  isActive?: boolean;
}

/** Fields `webhooks.update()` may change; at least one. */
export interface UpdateWebhookInput {
  url?: string;
  events?: readonly ServiceEventName[];
  isActive?: boolean;
}

/** How one attempt ended (the service documents "a status" without values; these are the emulator's). */
export type AttemptStatus = 'succeeded' | 'failed' | 'timeout' | 'network-error' | (string & {});

/**
 * One delivery attempt, as operation 5 lists it. The document promises a status, a response code and
 * a latency but shows no field names: these are the kit's, and anything else the service sends is kept.
 */
export interface DeliveryAttemptRecord {
  /** The delivery (`wdl_…`), the same on every retry and replay. */
  deliveryId: string;
  event?: string;
  status: AttemptStatus;
  /** The receiver's HTTP status; null when none came (time-out, network error). */
  responseCode: number | null;
  /** Milliseconds from sending to the answer. */
  latencyMs: number;
  [field: string]: unknown;
}

/** A list answer: the items under `data`, and whatever else the service sent beside them. */
export interface ListResult<T> {
  data: T[];
  [field: string]: unknown;
}

/** The answer to a replay (its body is "not shown"): kept as the service sent it. */
export type ReplayResult = Record<string, unknown>;
