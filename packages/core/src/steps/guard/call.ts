/**
 * Running h itself (step 4a; "run h" in the lease protocol's model, spec/lease-protocol.pml): the
 * schema, then the handler, inside the store's transaction for a transactional one, which also
 * completes its record (and advances its version, model step 5, when it has a guard) before committing.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { type Attempt, dropLease } from '../../attempt';
import type { DeliveryContext } from '../../context';
import { PermanentFailure } from '../../errors';
import type { HandlerEntry } from '../../handler-options';
import type { ReceiverState } from '../../receiver-state';
import { completionRetentionMs } from '../../retention';
import type { IdempotencyStore } from '../../store';
import { store } from './store-calls';

/**
 * Schema, then the handler. A transactional one runs inside the store's transaction, which also
 * completes its record (and advances its version, when it has a guard) before committing.
 */
export async function call(
  state: ReceiverState,
  attempt: Attempt,
  entry: HandlerEntry,
  context: DeliveryContext,
  completionKey: string | undefined,
  version: { key: string; version: number; retentionMs: number } | undefined,
): Promise<void> {
  const delivery = entry.schema === undefined ? attempt.delivery : await validated(attempt, entry, entry.schema);
  const handler = entry.handler as (delivery: unknown, context: unknown) => unknown;
  if (!entry.transactional) {
    await handler(delivery, context);
    return;
  }
  const transaction = store(state).transaction as NonNullable<IdempotencyStore['transaction']>;
  const completion = { key: completionKey as string, token: attempt.token, retentionMs: completionRetentionMs(state, attempt) };
  const { completed } = await transaction(
    async (tx) => {
      await handler(delivery, context.withTransaction(tx));
    },
    version === undefined ? completion : { ...completion, version },
  );
  dropLease(attempt, completion.key);
  if (!completed) {
    throw new Error(
      `hookline: the lease on ${attempt.delivery.deliveryId} (${entry.name}) was lost before its transaction committed; it was rolled back and the next attempt runs it`,
    );
  }
}

/** The delivery with `data` replaced by the schema's output, or a failure naming each issue's path. */
async function validated(attempt: Attempt, entry: HandlerEntry, schema: StandardSchemaV1): Promise<unknown> {
  const result = await schema['~standard'].validate(attempt.delivery.data);
  if (result.issues === undefined) return { ...attempt.delivery, data: result.value };
  const described = result.issues.map((issue) => `data${pathOf(issue)}: ${issue.message}`).join('; ');
  const message = `the ${attempt.delivery.event} payload does not match ${entry.name ?? 'the handler'}'s schema: ${described}`;
  if (entry.onInvalid === 'permanent') throw new PermanentFailure(message);
  const error = new Error(message);
  error.name = 'SchemaMismatch';
  throw error;
}

function pathOf(issue: StandardSchemaV1.Issue): string {
  return (issue.path ?? [])
    .map((segment) => {
      const key = typeof segment === 'object' ? segment.key : segment;
      return typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
    })
    .join('');
}
