import type { AttemptError } from '../attempt-answer';
import type { DeliveryAttempt, DeliveryRecord } from '../service-simulator';

/** A webhook as the emulator answers it (the service shows url, events, isActive; the rest is the emulator's). */
export interface EmulatedWebhook {
  id: string;
  url: string;
  events: string[];
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
}

/** One attempt as operation 5 lists it (the service's field names are not shown: these are the emulator's). */
export interface EmulatedAttempt {
  deliveryId: string;
  event: string;
  attempt: number;
  trigger: 'schedule' | 'replay';
  status: DeliveryAttempt['status'];
  responseCode: number | null;
  latencyMs: number;
  attemptedAt: string;
  /**
   * The answer's body, up to 8,192 characters (the rest is not read); without an answer, why not:
   * `connect ECONNREFUSED 127.0.0.1:3000 (nothing is listening there: …)`, or the time-out.
   */
  responseBody: string;
  /** The answer's headers, lower-case names; empty without an answer. */
  responseHeaders: Record<string, string>;
  /** The body went on past `responseBody` (it was cut off, and the connection dropped). */
  responseTruncated: boolean;
  /**
   * The answer was dropped to keep the emulator's memory within `maxAnswerCharsKeptInTotal` (the
   * oldest answers go first): `responseBody` is a note saying so, `responseHeaders` empty.
   */
  answerDropped?: true;
  /** Why no answer came (`ECONNREFUSED`, `ENOTFOUND`, `TIMEOUT`, …); absent when one came. */
  error?: AttemptError;
  /** When the delivery's next scheduled attempt is due (ISO 8601), null when none is. */
  nextAttemptAt: string | null;
}

/**
 * Where a delivery stands: `sending` (its first attempt has not ended), `succeeded`, `retrying` (an
 * attempt failed and the schedule has more), `gave-up` (the last scheduled attempt failed), `cancelled`
 * (its webhook was deleted, or the emulator forgot it or closed).
 */
export type EmulatedDeliveryStatus = 'sending' | 'succeeded' | 'retrying' | 'gave-up' | 'cancelled';

/** What the inspector filters by: a status, or `failed` for both `retrying` and `gave-up`. */
export type DeliveryStatusFilter = EmulatedDeliveryStatus | 'failed';

export const DELIVERY_STATUS_FILTERS: readonly DeliveryStatusFilter[] = [
  'sending',
  'succeeded',
  'failed',
  'retrying',
  'gave-up',
  'cancelled',
];

/** One delivery with what was sent and every attempt, for the inspector. */
export interface EmulatedDelivery {
  webhookId: string;
  /** The webhook's URL, where its next attempt goes. */
  url: string;
  deliveryId: string;
  event: string;
  createdAt: string;
  status: EmulatedDeliveryStatus;
  outcome: 'pending' | 'succeeded' | 'gave-up' | 'cancelled';
  /** An attempt is on the wire right now. */
  inFlight: boolean;
  nextAttemptAt: string | null;
  /** What every attempt of it sends: the same headers and bytes each time. */
  request: {
    method: 'POST';
    /** `content-type`, `x-service-signature`, `x-service-event`, `x-service-delivery-id`. */
    headers: Record<string, string>;
    /** Size of the exact body in bytes. */
    bodyBytes: number;
  };
  /** The body, parsed (JSON); the exact bytes are at `/inspector/deliveries/<deliveryId>/body`. */
  payload: unknown;
  attempts: EmulatedAttempt[];
}

export function toEmulatedAttempt(attempt: DeliveryAttempt, nextAttemptAt: number | null): EmulatedAttempt {
  return {
    deliveryId: attempt.deliveryId,
    event: attempt.event,
    attempt: attempt.attempt,
    trigger: attempt.trigger,
    status: attempt.status,
    responseCode: attempt.responseCode,
    latencyMs: attempt.latencyMs,
    attemptedAt: attempt.at,
    responseBody: attempt.responseBody,
    responseHeaders: { ...attempt.responseHeaders },
    responseTruncated: attempt.responseTruncated,
    ...(attempt.error === undefined ? {} : { error: { ...attempt.error } }),
    nextAttemptAt: nextAttemptAt === null ? null : new Date(nextAttemptAt).toISOString(),
  };
}

export function deliveryStatus(record: DeliveryRecord): EmulatedDeliveryStatus {
  if (record.outcome !== 'pending') return record.outcome;
  const retrying = record.nextAttemptAt !== null || record.attempts.some((attempt) => attempt.trigger === 'schedule');
  return retrying ? 'retrying' : 'sending';
}

export function matchesFilter(delivery: EmulatedDelivery, filter: { event?: string; status?: DeliveryStatusFilter }): boolean {
  if (filter.event !== undefined && delivery.event !== filter.event) return false;
  if (filter.status === undefined) return true;
  if (filter.status === 'failed') return delivery.status === 'retrying' || delivery.status === 'gave-up';
  return delivery.status === filter.status;
}

/** The exact body as text (the emulator only sends JSON it serialised itself). */
export function bodyText(body: string | Uint8Array): string {
  return typeof body === 'string' ? body : new TextDecoder().decode(body);
}

export function bodyBytes(body: string | Uint8Array): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
}

/** The body parsed, or its text when it is not JSON. */
export function payloadOf(body: string | Uint8Array): unknown {
  const text = bodyText(body);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
