/**
 * What `receiver.on(name, handler, options)` may ask for beyond running the handler: a stable name (for
 * per-handler completion), an ordering guard per resource, a payload schema, a transaction shared with
 * the delivery's completion. Checked once, at `on()` time, so a mistake fails at start-up.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { refuse } from './answers';
import type { Delivery } from './events';
import type { IdempotencyStore } from './store';

/** Keeps deliveries of one resource in order (see `HandlerOptions.order`). */
export interface OrderGuard<D> {
  /** The resource a delivery is about (e.g. `d => d.data.messageId`); `undefined` skips the guard for it. */
  key: (delivery: D) => string | undefined;
  /**
   * The delivery's place in the resource's history: a higher version is newer. Defaults to the body's
   * `timestamp` in milliseconds; return a rank for a lifecycle (sent 1 < delivered 2 < read 3).
   */
  version?: (delivery: D) => number;
  /**
   * A delivery not newer than the last one processed for its resource: `'skip'` it (answered 200, the
   * `stale` hook fires) or `'run'` it anyway.
   * @default 'skip'
   */
  stale?: 'skip' | 'run';
  /**
   * With ranks: `'retry'` answers 409 (the service retries) while the rank just below this delivery's
   * has not been processed for its resource, so the service's retry schedule works as a reorder buffer.
   * Bounded by `maxEarlyAttempts`: from that attempt on the delivery runs anyway.
   * @default undefined (run at once)
   */
  early?: 'retry';
  /**
   * The lowest rank, which may come first without waiting (with `early: 'retry'`).
   * @default 1
   */
  firstRank?: number;
  /**
   * With `early: 'retry'`: the attempt (the store's claim count) from which an early delivery runs
   * anyway. The service's attempts come at 0, 30 s, 2 min, 10 min, 1 h, 6 h, 24 h, so the default
   * waits up to ~1 h 12 min for a predecessor.
   * @default 5
   */
  maxEarlyAttempts?: number;
}

/** Options of one handler; `S` is the schema's output, which becomes the handler's `data`. */
export interface HandlerOptions<D, S = never> {
  /**
   * A stable name: with `completion: 'handler'` the store records each named handler's success, and a
   * retry runs only the handlers that have not succeeded. Required in that mode; unique per receiver.
   */
  name?: string;
  /** Deliveries of one resource never run concurrently, and an older one never runs after a newer one. */
  order?: OrderGuard<D>;
  /**
   * Any Standard Schema (zod, valibot, arktype…) that checks `data` before the handler runs; its output
   * becomes the handler's `data`. A mismatch fails the handler (the `failed` hook names the path).
   */
  schema?: StandardSchemaV1<unknown, S>;
  /**
   * A schema mismatch is retried by default (a deploy can fix the schema within the 31 h schedule);
   * `'permanent'` answers 200 and stops the retries instead.
   * @default 'retry'
   */
  onInvalid?: 'retry' | 'permanent';
  /**
   * Run inside a transaction of the store's database, handed to the handler as `context.transaction`,
   * in which the completion is recorded too: the handler's writes and the completion commit together
   * or not at all. Needs a store that offers transactions (`@hookline/postgres` or `@hookline/mysql`, given a pool). Holds a pooled
   * connection for the handler's duration: not for handlers that call other services.
   * @default false
   */
  transactional?: boolean;
}

/** A handler's options after the checks, as the run step reads them. */
export interface HandlerEntry {
  readonly handler: (delivery: never, context: never) => unknown;
  readonly name: string | undefined;
  readonly order: OrderGuard<Delivery<string, unknown>> | undefined;
  readonly schema: StandardSchemaV1 | undefined;
  readonly onInvalid: 'retry' | 'permanent';
  readonly transactional: boolean;
  /** Whether anything beyond running the handler is asked for. */
  readonly guarded: boolean;
}

const NAME = /^[A-Za-z0-9_.:-]{1,100}$/;

function misuse(message: string): Error {
  return refuse('CONFIGURATION_ERROR', `receiver.on(): ${message}`);
}

/** Checks one `on()` call's options against the receiver's settings. */
export function handlerEntry(
  handler: HandlerEntry['handler'],
  options: HandlerOptions<never, unknown> | undefined,
  receiver: { completion: 'delivery' | 'handler'; store: IdempotencyStore; names: Set<string> },
): HandlerEntry {
  const { name, order, schema, onInvalid = 'retry', transactional = false } = options ?? {};
  if (name !== undefined) {
    if (typeof name !== 'string' || !NAME.test(name)) {
      throw misuse(`name "${String(name)}" must be 1–100 letters, digits or _ . : - (it becomes part of a store key).`);
    }
    if (receiver.names.has(name)) throw misuse(`two handlers are named "${name}"; each handler's name must be unique.`);
    receiver.names.add(name);
  } else if (receiver.completion === 'handler') {
    throw misuse(
      "with completion: 'handler' every handler needs a stable name, so a retry knows which ones already succeeded: receiver.on(event, handler, { name: 'audit-log' }).",
    );
  }
  if (order !== undefined) {
    if (typeof order !== 'object' || typeof order.key !== 'function') throw misuse('order.key must be a function of the delivery.');
    if (name === undefined)
      throw misuse("a handler with an order guard needs a name: { name, order } (the guard's versions are kept per handler).");
    if (typeof receiver.store.readVersion !== 'function' || typeof receiver.store.advanceVersion !== 'function') {
      throw misuse(
        'order needs a store with version records (readVersion/advanceVersion): the memory, Redis, Postgres, SQLite, MySQL, DynamoDB and Durable Object stores have them.',
      );
    }
  }
  if (schema !== undefined && typeof (schema as Partial<StandardSchemaV1>)['~standard']?.validate !== 'function') {
    throw misuse('schema must be a Standard Schema (zod, valibot, arktype…): it has no ~standard.validate.');
  }
  if (onInvalid !== 'retry' && onInvalid !== 'permanent')
    throw misuse(`onInvalid must be 'retry' or 'permanent', got ${String(onInvalid)}.`);
  if (transactional && name === undefined) {
    throw misuse(
      "a transactional handler needs a name: { name: 'save-order', transactional: true } (its completion record, kept per handler, commits in its transaction).",
    );
  }
  if (transactional && typeof receiver.store.transaction !== 'function') {
    throw misuse(
      'transactional: true needs a store that runs transactions over a connection pool (@hookline/postgres or @hookline/mysql, given a pool); this store has no transaction().',
    );
  }
  return {
    handler,
    name,
    order: order as OrderGuard<Delivery<string, unknown>> | undefined,
    schema: schema as StandardSchemaV1 | undefined,
    onInvalid,
    transactional,
    guarded: receiver.completion === 'handler' || order !== undefined || schema !== undefined || transactional,
  };
}
