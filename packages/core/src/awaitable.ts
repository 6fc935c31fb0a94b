/**
 * "A value, or a promise of it." The receiver's steps return a plain value when everything they call
 * answered synchronously (static secrets under node:crypto, the memory store, synchronous handlers:
 * the common case) and a promise only when something really waits. Every `await` of an
 * already-settled value still costs microtask turns: on a 1 KB delivery with the memory store, the
 * all-synchronous path measured ~0.25 µs less per delivery (bench/src/in-process), a few percent of
 * the whole receive. So "value or promise?" is tested, not awaited: for the steps in one place, the
 * pipeline's `runStep` (step.ts).
 */

/** A value, or a promise of it: a store over a network returns promises, an in-process one may answer at once. */
export type Awaitable<T> = T | Promise<T>;

/** Whether a value is a promise (anything thenable) rather than a plain value. */
export function isPromiseLike<T>(value: Awaitable<T> | PromiseLike<T>): value is Promise<T> {
  return value !== null && typeof value === 'object' && typeof (value as Promise<T>).then === 'function';
}
