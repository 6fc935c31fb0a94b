import type { Attempt } from './attempt';
import { type Awaitable, isPromiseLike } from './awaitable';
import { type StoreOperationMessage, storeTimed, traceStoreOperation } from './diagnostics';

/** A store call that did not answer within `storeTimeoutMs`. */
export class StoreTimeoutError extends Error {
  constructor(
    readonly operation: StoreOperationMessage['operation'],
    readonly timeoutMs: number,
  ) {
    super(`hookline: the store's ${operation} did not answer within ${timeoutMs} ms (storeTimeoutMs)`);
    this.name = 'StoreTimeoutError';
  }
}

/** When a store call starts: a clock reading when a tracer wants the figure, -1 (no clock read) otherwise. */
function storeCallStart(attempt: Attempt): number {
  return storeTimed(attempt) ? performance.now() : -1;
}

/**
 * Bounds and times one store call that answered with a promise: one timer of `timeoutMs` (none for
 * `Infinity`: a call the backend bounds itself). `onLate` sees the value of a call that answered after
 * its time limit (a claim acquired after all must be released, so the next attempt need not wait out
 * the lease).
 */
function boundStoreCall<T>(
  attempt: Attempt,
  operation: StoreOperationMessage['operation'],
  startedAt: number,
  timeoutMs: number,
  result: Promise<T>,
  onLate?: (value: T) => void,
): Promise<T> {
  if (timeoutMs === Number.POSITIVE_INFINITY) return traced(attempt, operation, startedAt, result);
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      const error = new StoreTimeoutError(operation, timeoutMs);
      if (startedAt >= 0) traceStoreOperation(attempt, operation, performance.now() - startedAt, error);
      reject(error);
    }, timeoutMs);
    result.then(
      (value) => {
        if (timedOut) {
          onLate?.(value);
          return;
        }
        clearTimeout(timer);
        if (startedAt >= 0) traceStoreOperation(attempt, operation, performance.now() - startedAt);
        resolve(value);
      },
      (error: unknown) => {
        if (timedOut) return;
        clearTimeout(timer);
        if (startedAt >= 0) traceStoreOperation(attempt, operation, performance.now() - startedAt, error);
        reject(error);
      },
    );
  });
}

/** Times a call the backend bounds itself: no timer of ours. */
function traced<T>(attempt: Attempt, operation: StoreOperationMessage['operation'], startedAt: number, result: Promise<T>): Promise<T> {
  if (startedAt < 0) return result;
  return result.then(
    (value) => {
      traceStoreOperation(attempt, operation, performance.now() - startedAt);
      return value;
    },
    (error: unknown) => {
      traceStoreOperation(attempt, operation, performance.now() - startedAt, error);
      throw error;
    },
  );
}

/**
 * The one way the receiver calls its store: `call(context, attempt)`, bounded by `timeoutMs` and timed
 * for the trace; a synchronous throw is traced, then rethrown. `onLate` sees the value of a call that
 * answered after its time limit. A store that answered synchronously (the memory store) cannot hang
 * and pays nothing: with a `call` that closes over nothing (its arguments come as `context` and the
 * attempt), the synchronous path allocates nothing.
 */
export function callStore<T, C = undefined>(
  attempt: Attempt,
  operation: StoreOperationMessage['operation'],
  timeoutMs: number,
  call: (context: C, attempt: Attempt) => Awaitable<T>,
  context?: C,
  onLate?: (context: C, attempt: Attempt, value: T) => void,
): Awaitable<T> {
  const startedAt = storeCallStart(attempt);
  let result: Awaitable<T>;
  try {
    result = call(context as C, attempt);
  } catch (error) {
    if (startedAt >= 0) traceStoreOperation(attempt, operation, performance.now() - startedAt, error);
    throw error;
  }
  if (!isPromiseLike(result)) {
    if (startedAt >= 0) traceStoreOperation(attempt, operation, performance.now() - startedAt);
    return result;
  }
  const late = onLate === undefined ? undefined : (value: T) => onLate(context as C, attempt, value);
  return boundStoreCall(attempt, operation, startedAt, timeoutMs, result, late);
}
