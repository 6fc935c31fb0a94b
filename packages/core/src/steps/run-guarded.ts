/**
 * Step 4a, for handlers registered with options (`on(name, handler, { name, order, schema, transactional })`),
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
 *
 * Every lease taken here is held under the attempt's token and listed on the attempt (`holdLease`),
 * so the delivery's heartbeat renews it for as long as the handlers run and `maxRunMs` ends them all
 * together. The version advances BEFORE a handler's record is completed (or in the same transaction):
 * whatever instant a process dies at, a completed handler has an advanced version, and an older
 * delivery can never run after it.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { type Attempt, dropLease, holdLease } from '../attempt';
import type { Awaitable } from '../awaitable';
import type { DeliveryContext } from '../context';
import { PermanentFailure } from '../errors';
import type { Delivery } from '../events';
import type { HandlerEntry, OrderGuard } from '../handler-options';
import { emit, hasListeners, type ReceiverState, reportError } from '../receiver-state';
import type { ClaimResult, IdempotencyStore } from '../store';
import { completionRetentionMs } from '../retention';
import { callStore } from '../store-call';
import { storeFailure } from '../store-failure';
import { handlerRecordKey, orderLockKey, orderVersionKey } from '../store-keys';
import { guardMisconfigured, predecessorWaitMs, storeStop, waitStop } from './guard-refusals';

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

function store(state: ReceiverState): IdempotencyStore {
  return state.config.store;
}

/**
 * A guard's store call: bounded by `storeTimeoutMs` like every other, and a failure answered as the
 * claim's would be (503: the service retries; 500 for a store not set up) rather than counted as the
 * handler's.
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
    throw storeStop(storeFailure(state, error, attempt.delivery));
  }
}

/** What an ordering guard works with for one delivery: its lock, its version record and its version. */
interface Guard {
  readonly order: OrderGuard<Delivery<string, unknown>>;
  readonly lockKey: string;
  readonly versionKey: string;
  readonly version: number;
}

async function runEntry(state: ReceiverState, attempt: Attempt, entry: HandlerEntry, context: DeliveryContext): Promise<void> {
  // The guard's own functions first: a key or version it cannot use is refused before anything is claimed.
  const guard = entry.order === undefined ? undefined : guardOf(attempt, entry, entry.order);
  if (!tracked(state, entry)) return guardedCall(state, attempt, entry, context, undefined, guard);
  const key = handlerRecordKey(attempt.key, entry.name as string);
  const claim = await storeCall<ClaimResult>(state, attempt, 'claim', () => store(state).claim(key, attempt.token, state.config.leaseMs));
  if (claim.state === 'completed') return; // succeeded on an earlier attempt
  if (claim.state === 'in_progress') throw waitStop(claim.retryAfterMs, 'handler_in_progress');
  holdLease(attempt, key);
  try {
    await guardedCall(state, attempt, entry, context, key, guard);
  } catch (error) {
    // storeCall reported a failed release already (the store's own error); the record's lease lapses
    // on its own, and the handler's error is what answers.
    await releaseLease(state, attempt, key).catch(() => {});
    throw error;
  }
}

/** The resource and version of this delivery for the guard, checked; undefined when the key skips the guard. */
function guardOf(attempt: Attempt, entry: HandlerEntry, order: OrderGuard<Delivery<string, unknown>>): Guard | undefined {
  const name = entry.name as string;
  const { deliveryId } = attempt.delivery;
  const resource = guardValue(name, 'key', deliveryId, () => order.key(attempt.delivery));
  if (resource === undefined) return undefined;
  if (typeof resource !== 'string' || resource === '') {
    throw guardMisconfigured(
      name,
      'key',
      `order.key returned ${describe(resource)} for ${deliveryId}; it must return a non-empty string, or undefined to run this delivery without the guard.`,
    );
  }
  const version =
    order.version === undefined ? attempt.timestampMs : guardValue(name, 'version', deliveryId, () => order.version?.(attempt.delivery));
  if (typeof version !== 'number' || !Number.isFinite(version)) {
    throw guardMisconfigured(
      name,
      'version',
      `order.version returned ${describe(version)} for ${deliveryId}; it must return a finite number (Number() of a missing field is NaN: check the field it reads). The handler did not run.`,
    );
  }
  return {
    order,
    lockKey: orderLockKey(attempt.keyPrefix, name, resource),
    versionKey: orderVersionKey(attempt.keyPrefix, name, resource),
    version,
  };
}

/** Calls one of the guard's functions; a throw is the guard's configuration error, naming it. */
function guardValue(name: string, what: 'key' | 'version', deliveryId: string, read: () => unknown): unknown {
  try {
    return read();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw guardMisconfigured(name, what, `order.${what} threw for ${deliveryId}: ${message}. The handler did not run.`, error);
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}

/** The ordering guard around the call, when the handler has one; then the version and the record. */
async function guardedCall(
  state: ReceiverState,
  attempt: Attempt,
  entry: HandlerEntry,
  context: DeliveryContext,
  completionKey: string | undefined,
  guard: Guard | undefined,
): Promise<void> {
  if (guard === undefined) {
    await call(state, attempt, entry, context, completionKey, undefined);
    if (completionKey !== undefined && !entry.transactional) await completeRecord(state, attempt, completionKey);
    return;
  }
  const { order, lockKey, versionKey, version } = guard;
  const lock = await storeCall<ClaimResult>(state, attempt, 'claim', () =>
    store(state).claim(lockKey, attempt.token, state.config.leaseMs),
  );
  if (lock.state !== 'acquired') throw waitStop(lock.state === 'in_progress' ? lock.retryAfterMs : 1000, 'resource_busy');
  holdLease(attempt, lockKey);
  let releaseLock = true;
  try {
    const versions = store(state) as Required<Pick<IdempotencyStore, 'readVersion' | 'advanceVersion'>>;
    const current = await storeCall(state, attempt, 'readVersion', () => versions.readVersion(versionKey));
    if (current !== undefined && version <= current && (order.stale ?? 'skip') === 'skip') {
      if (hasListeners(state, 'stale'))
        emit(state, 'stale', { delivery: attempt.delivery, handler: entry.name as string, version, current });
      if (completionKey !== undefined) await completeRecord(state, attempt, completionKey);
      return;
    }
    if (isEarly(order, version, current, attempt.claims)) throw waitStop(predecessorWaitMs(attempt.claims), 'predecessor_not_seen');
    const retentionMs = state.config.retentionMs;
    if (entry.transactional) {
      await call(state, attempt, entry, context, completionKey, { key: versionKey, version, retentionMs });
      return;
    }
    await call(state, attempt, entry, context, completionKey, undefined);
    // Advanced before the record is completed: a crash or a failed call between the two leaves a handler
    // that will run again (its record is not completed) under a version that already keeps older
    // deliveries out, never a completed handler whose newer state an older delivery may overwrite.
    const failure = await advance(state, attempt, versions, versionKey, version);
    if (failure !== undefined) {
      // Both tries failed, and a call that timed out may still land. Were the lock released now, an
      // older delivery could write its state before that advance lands, and the newer one would then
      // be skipped as stale. Kept (no longer renewed), the lock lapses after leaseMs: the late advance
      // must land before another delivery of the resource can run, or it is as late as a paused process.
      releaseLock = false;
      dropLease(attempt, lockKey);
      throw failure;
    }
    if (completionKey !== undefined) await completeRecord(state, attempt, completionKey);
  } finally {
    // storeCall reported a failed release already; the lock's lease lapses on its own, and the
    // handler's outcome stands (a second report would wrongly say the delivery was not processed).
    if (releaseLock) await releaseLease(state, attempt, lockKey).catch(() => {});
  }
}

/**
 * The version advance after a handler succeeded, tried twice (a store blip rarely lasts two calls):
 * undefined once it answered, or the second try's refusal (503; each failure is reported).
 */
async function advance(
  state: ReceiverState,
  attempt: Attempt,
  versions: Required<Pick<IdempotencyStore, 'advanceVersion'>>,
  versionKey: string,
  version: number,
): Promise<unknown> {
  const once = () =>
    storeCall(state, attempt, 'advanceVersion', () => versions.advanceVersion(versionKey, version, state.config.retentionMs));
  try {
    await once();
    return undefined;
  } catch {
    try {
      await once();
      return undefined;
    } catch (error) {
      return error;
    }
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

/**
 * Schema, then the handler. A transactional one runs inside the store's transaction, which also
 * completes its record (and advances its version, when it has a guard) before committing.
 */
async function call(
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

async function completeRecord(state: ReceiverState, attempt: Attempt, key: string): Promise<void> {
  dropLease(attempt, key); // before the call: a heartbeat must not renew a record being completed
  const owned = await storeCall(state, attempt, 'complete', () =>
    store(state).complete(key, attempt.token, completionRetentionMs(state, attempt)),
  );
  if (!owned)
    reportError(state, new Error(`hookline: lost the record ${key} before it was completed`), {
      phase: 'store',
      delivery: attempt.delivery,
    });
}

function releaseLease(state: ReceiverState, attempt: Attempt, key: string): Promise<boolean> {
  dropLease(attempt, key);
  return storeCall(state, attempt, 'release', () => store(state).release(key, attempt.token));
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
