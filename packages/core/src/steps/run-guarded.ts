/**
 * Step 3 for handlers registered with options (`on(name, handler, { name, order, schema, transactional })`),
 * one after another like the plain path, each through the guards it asked for:
 *
 * - per-handler completion (`completion: 'handler'`, and every transactional handler): a record per
 *   handler (`<delivery key>#<name>`) claimed and completed through the store contract, so a retry
 *   runs only the handlers that have not succeeded. A failing handler does not stop the next ones;
 *   the first failure is rethrown once all ran;
 * - an ordering guard: a lease per resource so its deliveries never run concurrently, and a version
 *   record (compare-and-set) so an older delivery never runs after a newer one;
 * - a schema: `data` is checked (and transformed) before the handler sees it;
 * - a transaction: the handler's writes and its completion record commit together.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import * as answers from '../answers';
import type { Attempt } from '../attempt';
import { type Awaitable, isPromiseLike } from '../awaitable';
import type { DeliveryContext } from '../context';
import { PermanentFailure } from '../errors';
import type { HandlerEntry, OrderGuard } from '../handler-options';
import { emit, hasListeners, type ReceiverState, reportError } from '../receiver-state';
import type { ClaimResult } from '../store';
import { callStore, StoreTimeoutError } from '../store-call';
import { completionRetentionMs } from './settle';

/** Runs every guarded entry; rejects with the first failure once all ran. */
export async function runGuarded(state: ReceiverState, attempt: Attempt, context: DeliveryContext): Promise<void> {
  let firstError: unknown;
  let failed = false;
  for (const entry of attempt.matched.guarded ?? []) {
    try {
      await runEntry(state, attempt, entry, context);
    } catch (error) {
      if (!failed) {
        failed = true;
        firstError = error;
      } else {
        reportError(state, error, { phase: 'handler', delivery: attempt.delivery });
      }
      // Without per-handler records a retry re-runs everything: stop at the first failure, as the plain path does.
      if (!tracked(state, entry)) break;
    }
  }
  if (failed) throw firstError;
}

/** Whether the handler has a completion record of its own. */
function tracked(state: ReceiverState, entry: HandlerEntry): boolean {
  return entry.name !== undefined && (state.config.completion === 'handler' || entry.transactional);
}

function store(state: ReceiverState) {
  return state.config.store;
}

/**
 * A guard's store call: bounded by `storeTimeoutMs` like every other, and a failure answered 503 (the
 * service retries) rather than counted as the handler's.
 */
async function storeCall<T>(
  state: ReceiverState,
  attempt: Attempt,
  operation: 'claim' | 'complete' | 'release' | 'readVersion' | 'advanceVersion',
  call: () => Awaitable<T>,
): Promise<T> {
  try {
    return await callStore(attempt, operation, state.config.storeTimeoutMs, call);
  } catch (error) {
    reportError(state, error, { phase: 'store', delivery: attempt.delivery });
    throw answers.storeUnavailable(error, error instanceof StoreTimeoutError ? 'store_timeout' : 'store_unavailable');
  }
}

async function runEntry(state: ReceiverState, attempt: Attempt, entry: HandlerEntry, context: DeliveryContext): Promise<void> {
  if (!tracked(state, entry)) return guardedCall(state, attempt, entry, context, undefined);
  const key = `${attempt.key}#${entry.name}`;
  const claim = await storeCall<ClaimResult>(state, attempt, 'claim', () => store(state).claim(key, attempt.token, state.config.leaseMs));
  if (claim.state === 'completed') return; // succeeded on an earlier attempt
  if (claim.state === 'in_progress') throw retryLater(claim.retryAfterMs, 'handler_in_progress');
  try {
    await guardedCall(state, attempt, entry, context, key);
  } catch (error) {
    // storeCall reported a failed release already (the store's own error); the record's lease lapses
    // on its own, and the handler's error is what answers.
    await storeCall(state, attempt, 'release', () => store(state).release(key, attempt.token)).catch(() => {});
    throw error;
  }
}

/** The ordering guard around the call, when the handler has one. */
async function guardedCall(
  state: ReceiverState,
  attempt: Attempt,
  entry: HandlerEntry,
  context: DeliveryContext,
  completionKey: string | undefined,
): Promise<void> {
  const { order } = entry;
  const resource = order?.key(attempt.delivery);
  if (order === undefined || resource === undefined) return call(state, attempt, entry, context, completionKey);
  // The resource last: stores that shard by the key's last segment (Redis Cluster) spread resources.
  const lockKey = `${attempt.keyPrefix}order:${entry.name}:lock:${resource}`;
  const versionKey = `${attempt.keyPrefix}order:${entry.name}:version:${resource}`;
  const lock = await storeCall<ClaimResult>(state, attempt, 'claim', () =>
    store(state).claim(lockKey, attempt.token, state.config.leaseMs),
  );
  if (lock.state !== 'acquired') throw retryLater(lock.state === 'in_progress' ? lock.retryAfterMs : 1000, 'resource_busy');
  try {
    const version = order.version?.(attempt.delivery) ?? attempt.timestampMs;
    const versions = store(state) as Required<Pick<ReturnType<typeof store>, 'readVersion' | 'advanceVersion'>>;
    const current = await storeCall(state, attempt, 'readVersion', () => versions.readVersion(versionKey));
    if (current !== undefined && version <= current && (order.stale ?? 'skip') === 'skip') {
      if (hasListeners(state, 'stale'))
        emit(state, 'stale', { delivery: attempt.delivery, handler: entry.name as string, version, current });
      if (completionKey !== undefined) await completeRecord(state, attempt, completionKey);
      return;
    }
    if (isEarly(order, version, current, attempt.claims)) throw retryLater(30_000, 'predecessor_not_seen');
    await call(state, attempt, entry, context, completionKey);
    await storeCall(state, attempt, 'advanceVersion', () => versions.advanceVersion(versionKey, version, state.config.retentionMs));
  } finally {
    // storeCall reported a failed release already; the lock's lease lapses on its own, and the
    // handler's outcome stands (a second report would wrongly say the delivery was not processed).
    await storeCall(state, attempt, 'release', () => store(state).release(lockKey, attempt.token)).catch(() => {});
  }
}

/** A delivery whose rank's predecessor has not been processed yet, within the bounded wait. */
function isEarly(
  order: Pick<OrderGuard<unknown>, 'early' | 'firstRank' | 'maxEarlyAttempts'>,
  version: number,
  current: number | undefined,
  claims: number,
): boolean {
  if (order.early !== 'retry' || claims >= (order.maxEarlyAttempts ?? 5)) return false;
  return current === undefined ? version > (order.firstRank ?? 1) : version > current + 1;
}

/** Schema, then the handler (inside a transaction for a transactional one), then its completion record. */
async function call(
  state: ReceiverState,
  attempt: Attempt,
  entry: HandlerEntry,
  context: DeliveryContext,
  completionKey: string | undefined,
): Promise<void> {
  const delivery = entry.schema === undefined ? attempt.delivery : await validated(attempt, entry, entry.schema);
  const handler = entry.handler as (delivery: unknown, context: unknown) => unknown;
  if (!entry.transactional) {
    const result = handler(delivery, context);
    if (isPromiseLike(result)) await result;
    if (completionKey !== undefined) await completeRecord(state, attempt, completionKey);
    return;
  }
  const transaction = store(state).transaction as NonNullable<ReturnType<typeof store>['transaction']>;
  const { completed } = await transaction(
    async (tx) => {
      const result = handler(delivery, Object.create(context, { transaction: { value: tx, enumerable: true } }));
      if (isPromiseLike(result)) await result;
    },
    { key: completionKey as string, token: attempt.token, retentionMs: completionRetentionMs(state, attempt) },
  );
  if (!completed) {
    throw new Error(
      `hookline: the lease on ${attempt.delivery.deliveryId} (${entry.name}) was lost before its transaction committed; it was rolled back and the next attempt runs it`,
    );
  }
}

async function completeRecord(state: ReceiverState, attempt: Attempt, key: string): Promise<void> {
  const owned = await storeCall(state, attempt, 'complete', () =>
    store(state).complete(key, attempt.token, completionRetentionMs(state, attempt)),
  );
  if (!owned)
    reportError(state, new Error(`hookline: lost the record ${key} before it was completed`), {
      phase: 'store',
      delivery: attempt.delivery,
    });
}

/** The delivery with `data` replaced by the schema's output, or a failure naming each issue's path. */
async function validated(attempt: Attempt, entry: HandlerEntry, schema: StandardSchemaV1): Promise<unknown> {
  let result = schema['~standard'].validate(attempt.delivery.data);
  if (isPromiseLike(result)) result = await result;
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

/** A guard that cannot run the handler now: 409 with Retry-After, the service retries. */
function retryLater(retryAfterMs: number, reason: 'handler_in_progress' | 'resource_busy' | 'predecessor_not_seen') {
  const error = answers.inFlight(retryAfterMs);
  (error.details as Record<string, unknown>).reason = reason;
  return error;
}
