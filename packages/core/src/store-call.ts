import type { Attempt } from './attempt';
import { type Awaitable, isPromiseLike } from './awaitable';
import { storeTimed, traceStoreOperation, type StoreOperationMessage } from './diagnostics';

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

const now = (): number => performance.now();

/**
 * Runs one store operation with the receiver's time limit, and times it when a tracer listens. A store
 * that answers synchronously (the memory store) cannot hang and pays nothing; a promise gets one timer.
 * `onLate` sees the value of a call that answered after its time limit (a claim that was acquired after
 * all must be released, so the next attempt need not wait out the lease).
 */
export function callStore<T>(
  attempt: Attempt,
  operation: StoreOperationMessage['operation'],
  timeoutMs: number,
  call: () => Awaitable<T>,
  onLate?: (value: T) => void,
): Awaitable<T> {
  const startedAt = storeTimed(attempt) ? now() : -1;
  let result: Awaitable<T>;
  try {
    result = call();
  } catch (error) {
    if (startedAt >= 0) traceStoreOperation(attempt, operation, now() - startedAt, error);
    throw error;
  }
  if (!isPromiseLike(result)) {
    if (startedAt >= 0) traceStoreOperation(attempt, operation, now() - startedAt);
    return result;
  }
  const pending = result;
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      const error = new StoreTimeoutError(operation, timeoutMs);
      if (startedAt >= 0) traceStoreOperation(attempt, operation, now() - startedAt, error);
      reject(error);
    }, timeoutMs);
    pending.then(
      (value) => {
        if (timedOut) {
          onLate?.(value);
          return;
        }
        clearTimeout(timer);
        if (startedAt >= 0) traceStoreOperation(attempt, operation, now() - startedAt);
        resolve(value);
      },
      (error: unknown) => {
        if (timedOut) return;
        clearTimeout(timer);
        if (startedAt >= 0) traceStoreOperation(attempt, operation, now() - startedAt, error);
        reject(error);
      },
    );
  });
}
