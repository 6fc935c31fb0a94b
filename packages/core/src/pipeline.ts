/**
 * One delivery from start to end, and the one place its lifetime begins and ends (where it is traced).
 * The steps, numbered as in docs/ARCHITECTURE.md ("One delivery, step by step"):
 *
 *   receive:  admit (1, steps/admit.ts) → match (2, steps/match.ts) → claim (3, steps/claim.ts) →
 *             run the handlers (4a, steps/run-handlers.ts) → settle (5, steps/settle.ts);
 *             in answer-fast mode admit → match → enqueue (4b, steps/enqueue.ts), whose outcome ends
 *             it but for a job the queue cannot carry (then claim → run → settle, in the request)
 *   work:     a queued delivery, trusted as verified on receipt → match → claim → run → settle
 *
 * Each step ends the attempt with its outcome (outcome.ts), or returns undefined for the next step to
 * go on; no step answers HTTP. The receipt's answer is rendered from the outcome here, once
 * (answer-error.ts, answers.ts), and a worker's job result in job-result.ts. A step returns a value
 * when everything it called answered synchronously and a promise only when something really waits
 * (see awaitable.ts for why).
 */
import type * as answers from './answers';
import { answerError, answerOutcome, reportOutcome } from './answer-error';
import { type Attempt, followJobFence, newAttempt } from './attempt';
import { type Awaitable, isPromiseLike } from './awaitable';
import type { DeliveryTrace } from './delivery-trace';
import { startTrace, traceReturned, traceSettled } from './diagnostics';
import type { Outcome } from './outcome';
import type { QueuedDelivery } from './queue';
import type { ReceiverInput } from './endpoint';
import { type ReceiverState, reportError } from './receiver-state';
import { admit } from './steps/admit';
import { claim } from './steps/claim';
import { enqueue } from './steps/enqueue';
import { match } from './steps/match';
import { runHandlers } from './steps/run-handlers';
import { settle } from './steps/settle';
import { type AnyStep, runStep } from './step';
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
          return answerAttempt(state, value);
        },
        (error: unknown) => answerError(state, error, undefined, trace),
      );
    } else {
      attempt = admitted;
      answer = answerAttempt(state, admitted);
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

/** The receipt's answer, rendered from the outcome the steps ended the admitted delivery with. */
function answerAttempt(state: ReceiverState, attempt: Attempt): Awaitable<answers.ReceiverAnswer> {
  const outcome = processAttempt(state, attempt);
  if (!isPromiseLike(outcome)) return answerOutcome(state, attempt, outcome);
  return outcome.then((value) => answerOutcome(state, attempt, value));
}

/** The steps of an admitted delivery, or a trusted one (a worker's job), in order; the last one always ends it. */
const RUN_STEPS: readonly AnyStep[] = [match, claim, runHandlers, settle];

/**
 * Answer-fast mode's receipt: the queue's idempotent enqueue is the receipt, the worker claims
 * (steps/enqueue.ts). Only a job the queue cannot carry goes on past it, to be handled in the request.
 */
const ENQUEUE_STEPS: readonly AnyStep[] = [match, enqueue, claim, runHandlers, settle];

/** Admitted (or trusted): match the handlers, then claim, run and settle, or (answer-fast receipt) enqueue. */
export function processAttempt(state: ReceiverState, attempt: Attempt): Awaitable<Outcome> {
  const steps = attempt.mode === 'receive' && state.config.queue !== undefined ? ENQUEUE_STEPS : RUN_STEPS;
  return runSteps(state, attempt, steps, 0);
}

/**
 * The one runner: the steps from `from` on (each through `runStep`, step.ts), each ending the attempt
 * with its outcome or letting the next one go on. Synchronous for as long as the steps are (as Hono's compose is): a promise only from
 * the first step that waits, the rest chained on it.
 */
function runSteps(state: ReceiverState, attempt: Attempt, steps: readonly AnyStep[], from: number): Awaitable<Outcome> {
  for (let i = from; i < steps.length; i++) {
    const outcome = runStep(state, attempt, steps[i] as AnyStep);
    if (outcome === undefined) continue;
    if (!isPromiseLike(outcome)) return attempt.goesOn === undefined ? outcome : goOn(state, attempt, steps, i, outcome);
    return outcome.then((value) => {
      if (value === undefined) return runSteps(state, attempt, steps, i + 1);
      return attempt.goesOn === undefined ? value : goOn(state, attempt, steps, i, value);
    });
  }
  throw new Error('hookline: no step ended the delivery'); // never: the last step always ends it
}

/**
 * Step `at` ended the attempt while its handlers go on (past the deadline, or `maxRunMs`): the steps
 * after it run once they end, and their outcome is told to the listeners (nobody is answered then).
 */
function goOn(state: ReceiverState, attempt: Attempt, steps: readonly AnyStep[], at: number, outcome: Outcome): Outcome {
  const ended = attempt.goesOn as Promise<void>;
  attempt.goesOn = undefined;
  ended
    .then(() => runSteps(state, attempt, steps, at + 1))
    .then(
      (late) => reportOutcome(state, attempt, late),
      (error: unknown) => reportError(state, error, { phase: 'internal' }),
    );
  return outcome;
}

/** How a queued delivery's run ended, for the worker to tell its queue (job-result.ts). */
export interface WorkResult {
  readonly outcome: Outcome;
  /** The store's count of claims of this delivery, this one included (0 if never claimed). */
  readonly claims: number;
}

/**
 * The trusted entry: runs claim → handlers → settle on a delivery that was verified on receipt (a
 * queued job). Never reachable from HTTP: only `receiver.work()` calls it. Its keys live in their own
 * namespace (`<namespace>work:`, store-keys.ts), apart from synchronous mode's receipts'. The worker
 * checked the job and parsed its timestamp (`timestampMs`), and started its trace with what it knew of
 * the job (event, id, timestamp, the queue's try).
 */
export async function runTrusted(
  state: ReceiverState,
  queued: QueuedDelivery,
  timestampMs: number,
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
    timestampMs,
    receivedAt: queued.receivedAt,
    secretIndex: queued.secretIndex,
    headers: {},
    keyPrefix: workPrefix(state.config.namespace, queued.scope),
    trace,
  });
  const unfence = fence === undefined ? undefined : followJobFence(fence, attempt);
  let outcome: Outcome;
  try {
    outcome = await processAttempt(state, attempt);
  } finally {
    unfence?.();
  }
  reportOutcome(state, attempt, outcome);
  if (trace !== undefined) {
    traceReturned(trace);
    traceSettled(trace, attempt, undefined);
  }
  return { outcome, claims: attempt.claims };
}
