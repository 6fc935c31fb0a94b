/**
 * One delivery from start to end, and the one place its lifetime begins and ends (where it is traced):
 *
 *   receive:  admit (steps/admit.ts) → claim (steps/claim.ts) → run handlers (steps/run-handlers.ts)
 *             or, in answer-fast mode, enqueue (steps/enqueue.ts) → settle (steps/settle.ts) → answer
 *   work:     a queued delivery, trusted as verified on receipt → claim → run handlers → settle
 *
 * Each step returns a value when everything it called answered synchronously and a promise only when
 * something really waits (see awaitable.ts for why).
 */
import * as answers from './answers';
import { type Attempt, newAttempt } from './attempt';
import { type Awaitable, isPromiseLike } from './awaitable';
import { type DeliveryTrace, startTrace, traceReturned, traceSettled } from './diagnostics';
import type { QueuedDelivery } from './queue';
import type { ReceiverInput } from './receiver';
import { emit, hasListeners, type ReceiverState, reportError } from './receiver-state';
import { admit } from './steps/admit';
import { claim } from './steps/claim';
import { enqueue, enqueueAgain } from './steps/enqueue';
import { answerError } from './steps/answer-error';
import { DEADLINE, OVERRUN, type RunResult, runHandlers } from './steps/run-handlers';
import { settle } from './steps/settle';
import { waitRefusal } from './steps/guard-refusals';
import { StoreDataError, type ClaimResult } from './store';
import { StoreTimeoutError } from './store-call';
import { workPrefix } from './store-keys';

/** Serves one request: never rejects (a bug of ours is a 500, the service retries). */
export function receive(state: ReceiverState, input: ReceiverInput): Promise<answers.ReceiverAnswer> {
  const answer = receiveAwaitable(state, input);
  return isPromiseLike(answer) ? answer : Promise.resolve(answer);
}

/**
 * `receive` without the promise when every step answered synchronously: the node:http bridge writes
 * such an answer in the same turn, without a microtask (see node-handler.ts). Never throws or rejects.
 */
export function receiveAwaitable(state: ReceiverState, input: ReceiverInput): Awaitable<answers.ReceiverAnswer> {
  const trace = startTrace('receive', state.config.now);
  let attempt: Attempt | undefined;
  let answer: Awaitable<answers.ReceiverAnswer>;
  try {
    const admitted = admit(state, input, trace);
    if (isPromiseLike(admitted)) {
      answer = admitted.then(
        (value) => {
          attempt = value;
          return processAttempt(state, value);
        },
        (error: unknown) => answerError(state, error, undefined, trace),
      );
    } else {
      attempt = admitted;
      answer = processAttempt(state, admitted);
    }
  } catch (error) {
    // A refusal from admit, or a bug of ours in a later synchronous step.
    if (attempt !== undefined) reportError(state, error, { phase: 'internal' });
    answer = answerError(state, error, attempt, trace);
  }
  if (trace !== undefined) traceReturned(trace);
  if (!isPromiseLike(answer)) {
    if (trace !== undefined) traceSettled(trace, attempt, answer.status);
    return answer;
  }
  return answer.then(
    (value) => {
      if (trace !== undefined) traceSettled(trace, attempt, value.status);
      return value;
    },
    (error: unknown) => {
      reportError(state, error, { phase: 'internal' });
      const value = answerError(state, error, attempt, trace);
      if (trace !== undefined) traceSettled(trace, attempt, value.status);
      return value;
    },
  );
}

/**
 * The entry for an error an adapter met before the receiver saw the request (413 while streaming, 405,
 * 408…): `receiver.answerError`. Answered and traced like any other delivery's.
 */
export function receiveError(state: ReceiverState, error: unknown): answers.ReceiverAnswer {
  const trace = startTrace('receive', state.config.now);
  const answer = answerError(state, error, undefined, trace);
  if (trace !== undefined) {
    traceReturned(trace);
    traceSettled(trace, undefined, answer.status);
  }
  return answer;
}

/** Admitted (or trusted): match the handlers, claim, then run (or enqueue) and settle. */
export function processAttempt(state: ReceiverState, attempt: Attempt): Awaitable<answers.ReceiverAnswer> {
  const { delivery } = attempt;
  if (hasListeners(state, 'received')) emit(state, 'received', { delivery });
  attempt.matched = state.registry.match(delivery.event);
  if (attempt.matched.handlers.length === 0) {
    // Nothing to remember: a later deploy that adds a handler should still get the retries.
    attempt.outcome = 'unhandled';
    if (hasListeners(state, 'unhandled')) emit(state, 'unhandled', { delivery });
    return answers.unhandledAnswer();
  }
  let result: Awaitable<ClaimResult>;
  try {
    result = claim(state, attempt);
  } catch (error) {
    return storeFailed(state, attempt, error);
  }
  if (isPromiseLike(result)) {
    return result.then(
      (value) => claimed(state, attempt, value),
      (error: unknown) => storeFailed(state, attempt, error),
    );
  }
  return claimed(state, attempt, result);
}

function claimed(state: ReceiverState, attempt: Attempt, result: ClaimResult): Awaitable<answers.ReceiverAnswer> {
  if (result.state === 'completed') {
    // Answer-fast mode: only the queue knows whether the job ended in the dead letters.
    if (attempt.mode === 'receive' && state.config.queue !== undefined) return enqueueAgain(state, attempt);
    attempt.outcome = 'duplicate';
    if (hasListeners(state, 'duplicate')) emit(state, 'duplicate', { delivery: attempt.delivery, state: 'completed' });
    return answers.duplicateAnswer();
  }
  if (result.state === 'in_progress') {
    attempt.outcome = 'in_progress';
    if (hasListeners(state, 'duplicate')) emit(state, 'duplicate', { delivery: attempt.delivery, state: 'in_progress' });
    // Marked as a guard's wait: a queue worker waits for the other attempt without spending a try.
    attempt.error = waitRefusal(result.retryAfterMs, 'in_progress');
    return answerError(state, attempt.error, attempt, attempt.trace);
  }
  attempt.claims = result.attempt;
  if (attempt.trace !== undefined) attempt.trace.attempt = result.attempt;
  if (attempt.mode === 'receive' && state.config.queue !== undefined) return enqueue(state, attempt);
  const outcome = runHandlers(state, attempt);
  return isPromiseLike(outcome) ? outcome.then((value) => ran(state, attempt, value)) : ran(state, attempt, outcome);
}

function ran(state: ReceiverState, attempt: Attempt, outcome: RunResult): Awaitable<answers.ReceiverAnswer> {
  if (outcome === OVERRUN) return overran(state, attempt);
  if (outcome !== DEADLINE) return settle(state, attempt, outcome);
  // The handlers go on; when they end the record is completed or released, so the service's next
  // attempt gets a duplicate answer or runs them again.
  attempt.context?.abort();
  attempt.outcome = 'deadline';
  void attempt.settled?.then((late) => settle(state, attempt, late));
  return answerError(state, answers.deadlinePassed(state.config.deadlineMs), attempt, attempt.trace);
}

/**
 * A worker's handlers ran past maxRunMs (receive mode answered at the deadline long before): the job
 * fails like a thrown error, so the queue retries it and its slot is free, whatever the handler does.
 * Its leases lapse rather than being released, so the retry waits for them (a live handler may still
 * finish, and then completes the delivery as it would have).
 */
function overran(state: ReceiverState, attempt: Attempt): answers.ReceiverAnswer {
  attempt.outcome = 'failed';
  attempt.error = new Error(
    `hookline: the handlers of ${attempt.delivery.deliveryId} ran past maxRunMs (${state.config.maxRunMs} ms); the job is retried once their leases lapse`,
  );
  void attempt.settled?.then((late) => settle(state, attempt, late));
  return answerError(state, answers.deadlinePassed(state.config.maxRunMs), attempt, attempt.trace);
}

/** The store failed (or timed out) before anything ran: fail closed, the service retries. */
function storeFailed(state: ReceiverState, attempt: Attempt, error: unknown): answers.ReceiverAnswer {
  reportError(state, error, { phase: 'store', delivery: attempt.delivery });
  const refusal = StoreDataError.is(error)
    ? answers.storeDataError(error)
    : answers.storeUnavailable(error, error instanceof StoreTimeoutError ? 'store_timeout' : 'store_unavailable');
  return answerError(state, refusal, attempt, attempt.trace);
}

/**
 * The trusted entry: runs claim → handlers → settle on a delivery that was verified on receipt (a
 * queued job). Never reachable from HTTP: only `receiver.work()` calls it. Its keys live in their own
 * namespace (`<namespace>work:`), apart from the receipts', so the receipt's completion does not make
 * the job a duplicate. Resolves with the attempt, whose `outcome` says what happened.
 */
export async function runTrusted(state: ReceiverState, queued: QueuedDelivery, trace: DeliveryTrace | undefined): Promise<Attempt> {
  // The envelope's four fields, as the receiver hands them to handlers: a job stored from the body's
  // own text (queuedDeliveryJson) also holds any other top-level field the service sent.
  const { event, deliveryId, timestamp, data } = queued.delivery;
  const delivery = { event, deliveryId, timestamp, data };
  const attempt = newAttempt({
    mode: 'work',
    delivery,
    timestampMs: Date.parse(delivery.timestamp),
    receivedAt: queued.receivedAt,
    secretIndex: queued.secretIndex,
    headers: {},
    keyPrefix: workPrefix(state.config.namespace, queued.scope),
    trace,
  });
  if (trace !== undefined) {
    trace.event = delivery.event;
    trace.deliveryId = delivery.deliveryId;
    trace.timestampMs = attempt.timestampMs;
  }
  await processAttempt(state, attempt);
  return attempt;
}
