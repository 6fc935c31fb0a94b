/**
 * One delivery from start to end, and the one place its lifetime begins and ends (where it is traced).
 * The steps, numbered as in docs/ARCHITECTURE.md ("One delivery, step by step"):
 *
 *   receive:  admit (1, steps/admit.ts) → match (2, steps/match.ts) → claim (3, steps/claim.ts) →
 *             run the handlers (4a, steps/run-handlers.ts) → settle (5, steps/settle.ts);
 *             in answer-fast mode admit → match → enqueue (4b, steps/enqueue.ts): no claim, no settle
 *   work:     a queued delivery, trusted as verified on receipt → match → claim → run → settle
 *
 * Each step ends the attempt with its answer (and its outcome on the attempt), or returns undefined
 * for the next step to go on. It returns a value when everything it called answered synchronously and
 * a promise only when something really waits (see awaitable.ts for why).
 */
import type * as answers from './answers';
import { type Attempt, type AttemptOutcome, followJobFence, newAttempt } from './attempt';
import { type Awaitable, isPromiseLike } from './awaitable';
import { type DeliveryTrace, startTrace, traceReturned, traceSettled } from './diagnostics';
import type { QueuedDelivery } from './queue';
import type { ReceiverInput } from './receiver';
import { type ReceiverState, reportError } from './receiver-state';
import { admit } from './steps/admit';
import { answerError } from './steps/answer-error';
import { claim } from './steps/claim';
import { enqueue } from './steps/enqueue';
import { match } from './steps/match';
import { runHandlers } from './steps/run-handlers';
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

/** A step after admission: it ends the attempt with its answer, or returns undefined and the next step goes on. */
type Step = (state: ReceiverState, attempt: Attempt) => Awaitable<answers.ReceiverAnswer | undefined>;

/** The steps of an admitted delivery, or a trusted one (a worker's job), in order; the last one always answers. */
const RUN_STEPS: readonly Step[] = [match, claim, runHandlers];

/** Answer-fast mode's receipt: the queue's idempotent enqueue is the receipt, the worker claims (steps/enqueue.ts). */
const ENQUEUE_STEPS: readonly Step[] = [match, enqueue];

/** Admitted (or trusted): match the handlers, then claim, run and settle, or (answer-fast receipt) enqueue. */
export function processAttempt(state: ReceiverState, attempt: Attempt): Awaitable<answers.ReceiverAnswer> {
  const steps = attempt.mode === 'receive' && state.config.queue !== undefined ? ENQUEUE_STEPS : RUN_STEPS;
  return runSteps(state, attempt, steps, 0);
}

/**
 * The one runner: the steps from `from` on, each ending the attempt with its answer or letting the
 * next one go on. Synchronous for as long as the steps are (as Hono's compose is): a promise only from
 * the first step that waits, the rest chained on it.
 */
function runSteps(state: ReceiverState, attempt: Attempt, steps: readonly Step[], from: number): Awaitable<answers.ReceiverAnswer> {
  for (let i = from; i < steps.length; i++) {
    const answer = (steps[i] as Step)(state, attempt);
    if (answer === undefined) continue;
    if (!isPromiseLike(answer)) return answer;
    return answer.then((value) => value ?? runSteps(state, attempt, steps, i + 1));
  }
  throw new Error('hookline: no step answered the delivery'); // never: the last step always answers
}

/** How a queued delivery's run ended, for the worker to tell its queue. */
export interface WorkResult {
  /** `rejected` (or undefined) when it was not processed: the store failed before anything ran. */
  readonly outcome: AttemptOutcome | undefined;
  /** What a handler threw (`failed`, `permanent`), or the refusal that stopped it. */
  readonly error: unknown;
  /** The store's count of claims of this delivery, this one included (0 if never claimed). */
  readonly claims: number;
}

/**
 * The trusted entry: runs claim → handlers → settle on a delivery that was verified on receipt (a
 * queued job). Never reachable from HTTP: only `receiver.work()` calls it. Its keys live in their own
 * namespace (`<namespace>work:`), apart from the receipts', so the receipt's completion does not make
 * the job a duplicate. `tries` is the queue's count of the job's tries, for the trace.
 */
export async function runTrusted(
  state: ReceiverState,
  queued: QueuedDelivery,
  tries: number,
  trace: DeliveryTrace | undefined,
  fence?: AbortSignal,
): Promise<WorkResult> {
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
  const unfence = fence === undefined ? undefined : followJobFence(fence, attempt);
  try {
    await processAttempt(state, attempt);
  } finally {
    unfence?.();
  }
  if (trace !== undefined) {
    traceReturned(trace);
    trace.attempt = tries;
    traceSettled(trace, attempt, undefined);
  }
  return { outcome: attempt.outcome, error: attempt.error, claims: attempt.claims };
}
