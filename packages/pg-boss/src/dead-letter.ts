import { type DeadLetter, type QueuedDelivery, scopedDeliveryId } from '@hookline/core/adapter';
import { jobIdFor } from './job-id';

/** A failed job row as the dead-letter query reads it. */
export interface FailedRow {
  id: string;
  name: string;
  data: unknown;
  attempts: number;
  last_error: string | null;
  failed_at: Date;
}

/**
 * A failed job as `deadLetters()` lists it. The deliveryId and scope come from the payload when they
 * give back the job's id (UUID v5 of their `scopedDeliveryId`, which `replay` looks up); otherwise (a
 * corrupt payload, or a job this package did not name) the job's id stands as the deliveryId, and
 * `replay` finds the job by it.
 */
export function deadLetterOf(row: FailedRow): DeadLetter {
  const payload = typeof row.data === 'object' && row.data !== null ? (row.data as Partial<QueuedDelivery>) : undefined;
  const delivery = typeof payload?.delivery === 'object' && payload.delivery !== null ? payload.delivery : undefined;
  const sent = typeof delivery?.deliveryId === 'string' ? delivery.deliveryId : undefined;
  const scope = typeof payload?.scope === 'string' && payload.scope !== '' ? payload.scope : undefined;
  const named =
    sent !== undefined && jobIdFor(scopedDeliveryId({ deliveryId: sent, scope })) === row.id
      ? scope === undefined
        ? { deliveryId: sent }
        : { deliveryId: sent, scope }
      : { deliveryId: row.id };
  return {
    ...named,
    event: typeof delivery?.event === 'string' ? delivery.event : 'unknown',
    attempts: Number(row.attempts),
    lastError: row.last_error ?? '',
    failedAt: new Date(row.failed_at),
  };
}
