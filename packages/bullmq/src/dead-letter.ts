import { type DeadLetter, type QueuedDelivery, scopedDeliveryId, splitScopedId } from '@hookline/core/adapter';
import type { Job } from 'bullmq';
import { unreadableData } from './delivery-job';
import { deliveryIdOf } from './job-id';

/**
 * A failed job as `deadLetters()` lists it. The deliveryId and scope come from the payload when it
 * agrees with the jobId (which is what `replay` looks up), and from the jobId otherwise (a corrupt
 * payload, or one that names another delivery than its job), split where the scope ends.
 */
export function deadLetterOf(job: Job): DeadLetter {
  const payload = unreadableData(job) === undefined ? (job.data as Partial<QueuedDelivery> | null | undefined) : undefined;
  const delivery = typeof payload === 'object' && payload !== null ? payload.delivery : undefined;
  const sent = typeof delivery?.deliveryId === 'string' ? delivery.deliveryId : undefined;
  const sentScope = typeof payload?.scope === 'string' && payload.scope !== '' ? payload.scope : undefined;
  const scoped = deliveryIdOf(job.id);
  let named: { deliveryId: string; scope?: string };
  if (sent !== undefined && (scoped === undefined || scopedDeliveryId({ deliveryId: sent, scope: sentScope }) === scoped)) {
    named = sentScope === undefined ? { deliveryId: sent } : { deliveryId: sent, scope: sentScope };
  } else {
    named = scoped === undefined ? { deliveryId: String(job.id ?? 'unknown') } : splitScopedId(scoped);
  }
  return {
    ...named,
    event: typeof delivery?.event === 'string' ? delivery.event : job.name,
    attempts: job.attemptsMade,
    lastError: job.failedReason ?? '',
    failedAt: new Date(job.finishedOn ?? job.timestamp),
  };
}
