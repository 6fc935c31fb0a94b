/**
 * What a step of the pipeline is, and the one way its call is chained to what follows it (pipeline.ts
 * runs the steps in order with `runStep`). A step makes one call (into the store, the queue or the
 * handlers), then says what the call's value means, or (`failed`) what its failure means: the
 * attempt's outcome (outcome.ts), or undefined for the next step to go on. "Value or promise?" is
 * decided here, once, rather than in each step: a step whose call answered synchronously goes on in
 * the same turn, and the synchronous path allocates no closure (awaitable.ts says why that pays).
 */
import type { Attempt } from './attempt';
import { type Awaitable, isPromiseLike } from './awaitable';
import type { Outcome } from './outcome';
import type { ReceiverState } from './receiver-state';

/** A step whose call gives a `T`, and which ends in an `R` (the pipeline's: an outcome, or undefined to go on). */
export interface Step<T, R = Outcome | undefined, S = ReceiverState, A = Attempt> {
  /** The step's call: a value, or a promise only when something really waits. */
  readonly call: (state: S, attempt: A) => Awaitable<T>;
  /**
   * What the call's value means. Absent: the value is the step's end itself. (Not named `then`: a
   * step must not look like a promise.)
   */
  readonly answered?: (state: S, attempt: A, value: T) => Awaitable<R>;
  /**
   * What the call's throw or rejection means (never what `answered` throws: that is a bug of the
   * step's, answered as one). Absent: it goes to the pipeline, as a bug.
   */
  readonly failed?: (state: S, attempt: A, error: unknown) => R;
}

/** A step of any value, as the pipeline lists them. */
export type AnyStep = Step<never>;

/** Lists a step among the others: its call's value is its own business. */
export function step<T>(definition: Step<T>): AnyStep {
  return definition as unknown as AnyStep;
}

/** Runs one step: its call, then what its value (or its failure) means, now or once the promise settles. */
export function runStep<T, R, S, A>(state: S, attempt: A, step: Step<T, R, S, A>): Awaitable<R> {
  const { answered, failed } = step;
  let value: Awaitable<T>;
  try {
    value = step.call(state, attempt);
  } catch (error) {
    if (failed === undefined) throw error;
    return failed(state, attempt, error);
  }
  if (!isPromiseLike(value)) return answered === undefined ? (value as unknown as R) : answered(state, attempt, value);
  return value.then(
    answered === undefined ? (settled) => settled as unknown as R : (settled) => answered(state, attempt, settled),
    failed === undefined ? undefined : (error: unknown) => failed(state, attempt, error),
  );
}
