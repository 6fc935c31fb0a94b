/**
 * "A value, or a promise of it." The receiver's steps return a plain value when everything they call
 * answered synchronously (static secrets under node:crypto, the memory store, synchronous handlers:
 * the common case) and a promise only when something really waits. Every `await` of an
 * already-settled value still costs microtask turns: on a 1 KB delivery with the memory store, the
 * all-synchronous path measured ~0.25 µs less per delivery (bench/src/in-process), a few percent of
 * the whole receive. So the steps test "value or promise?" here, in one place, instead of awaiting.
 */

/** A value, or a promise of it: a store over a network returns promises, an in-process one may answer at once. */
export type Awaitable<T> = T | Promise<T>;

/** Whether a value is a promise (anything thenable) rather than a plain value. */
export function isPromiseLike<T>(value: Awaitable<T> | PromiseLike<T>): value is Promise<T> {
  return value !== null && typeof value === 'object' && typeof (value as Promise<T>).then === 'function';
}

/**
 * Applies `next` to a value now, or to a promise's value when it settles; `onError` (optional) maps a
 * synchronous throw or a rejection alike. The result is synchronous whenever `value` is.
 */
export function mapAwaitable<T, R>(
  value: Awaitable<T>,
  next: (value: T) => Awaitable<R>,
  onError?: (error: unknown) => Awaitable<R>,
): Awaitable<R> {
  if (isPromiseLike(value)) return value.then(next, onError);
  if (onError === undefined) return next(value);
  try {
    return next(value);
  } catch (error) {
    return onError(error);
  }
}

/**
 * A step's call and what follows it, with "value or promise?" decided here rather than in the step:
 * runs `call(state, attempt)`, then `onValue` with its value, now or once the promise settles.
 * `onError` gets what `call` threw or rejected with (never what `onValue` throws: that is a bug of the
 * step's and goes to the pipeline, as in either path); without it, those go to the pipeline too. It
 * takes the step's two arguments rather than a closure, so the synchronous path allocates nothing.
 *
 * @example
 * return thenStep(state, attempt, takeLease, claimed, storeFailed);
 */
export function thenStep<S, A, T, R>(
  state: S,
  attempt: A,
  call: (state: S, attempt: A) => Awaitable<T>,
  onValue: (state: S, attempt: A, value: T) => Awaitable<R>,
  onError?: (state: S, attempt: A, error: unknown) => Awaitable<R>,
): Awaitable<R> {
  let value: Awaitable<T>;
  try {
    value = call(state, attempt);
  } catch (error) {
    if (onError === undefined) throw error;
    return onError(state, attempt, error);
  }
  if (!isPromiseLike(value)) return onValue(state, attempt, value);
  return value.then(
    (settled) => onValue(state, attempt, settled),
    onError === undefined ? undefined : (error: unknown) => onError(state, attempt, error),
  );
}
