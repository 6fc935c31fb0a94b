import type { DeadLetter, QueuedDelivery } from '@hookline/core/adapter';
import type { Job } from 'bullmq';
import { unreadableData } from './delivery-job';
import { deliveryIdOf } from './job-id';

/**
 * Splits a scoped id (`scope + deliveryId`, what a jobId encodes) when the payload cannot say where
 * the scope ends. A scope is `<tenant>:` and the service's deliveryIds start with `wdl_`, so the split
 * is at the last `:wdl_`; a tenant name or deliveryId holding `:wdl_` itself could be split wrongly,
 * but the listed letter still replays the right job, since `replay` joins the two parts again.
 */
export function splitScopedId(scoped: string): { deliveryId: string; scope?: string } {
  const at = scoped.lastIndexOf(':wdl_');
  return at < 0 ? { deliveryId: scoped } : { scope: scoped.slice(0, at + 1), deliveryId: scoped.slice(at + 1) };
}

/**
 * A failed job as `deadLetters()` lists it. The deliveryId and scope come from the payload when it
 * agrees with the jobId (which is what `replay` looks up), and from the jobId otherwise: a corrupt
 * payload, or one that names another delivery than its job.
 */
export function deadLetterOf(job: Job): DeadLetter {
  const payload = unreadableData(job) === undefined ? (job.data as Partial<QueuedDelivery> | null | undefined) : undefined;
  const delivery = typeof payload === 'object' && payload !== null ? payload.delivery : undefined;
  const sent = typeof delivery?.deliveryId === 'string' ? delivery.deliveryId : undefined;
  const sentScope = typeof payload?.scope === 'string' && payload.scope !== '' ? payload.scope : undefined;
  const scoped = deliveryIdOf(job.id);
  let named: { deliveryId: string; scope?: string };
  if (sent !== undefined && (scoped === undefined || (sentScope ?? '') + sent === scoped)) {
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
