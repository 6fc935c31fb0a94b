/**
 * Answer-fast mode's start-up check of the queue's size limit against `maxBodyBytes`. A queue with a
 * message size limit (SQS, Cloudflare Queues) says through `bodyLimitBytes()` the largest body it
 * always carries; a receiver that accepts larger bodies handles those in the request instead of
 * queueing them (steps/enqueue.ts). That is worth one warning when the receiver is made,
 * saying what happens to such a delivery, rather than a surprise on the first large one.
 *
 * Not when the queue carries nearly all of `maxBodyBytes` (at least `NEARLY_ALL`): SQS at its 1 MiB
 * maximum carries all but the 9 KB its attributes take, so every default set-up would print a warning
 * nobody can act on (SQS's limit cannot go higher) about deliveries that are all but never sent. Those
 * few are handled in the request all the same, as the queue's README says. A queue that carries much
 * less (Cloudflare Queues' 128 KB against the default 1 MiB) is worth the warning.
 */
import type { ReceiverState } from './receiver-state';
import { callUserCode } from './user-code';

/** The share of `maxBodyBytes` a queue may carry without a warning: what it cannot carry is a sliver. */
const NEARLY_ALL = 15 / 16;

export function checkQueueLimit(state: ReceiverState): void {
  const { queue, maxBodyBytes, deadlineMs } = state.config;
  if (typeof queue?.bodyLimitBytes !== 'function') return;
  let asked: Promise<number | undefined>;
  try {
    asked = Promise.resolve(queue.bodyLimitBytes());
  } catch (error) {
    asked = Promise.reject(error);
  }
  asked.then(
    (limitBytes) => {
      if (typeof limitBytes !== 'number' || limitBytes >= maxBodyBytes * NEARLY_ALL) return;
      warn(
        state,
        { queue: queue.name, maxBodyBytes, queueBodyLimitBytes: limitBytes },
        `hookline: the ${queue.name} queue carries deliveries of up to ${limitBytes} bytes and maxBodyBytes is ${maxBodyBytes}: a delivery between the two is still accepted, but handled in the request as in synchronous mode rather than queued (its handlers must finish within deadlineMs, ${deadlineMs} ms, or it is answered 503 and the service retries it). Raise the queue's limit to queue every delivery you accept.`,
      );
    },
    (error: unknown) => {
      warn(
        state,
        { queue: queue.name, err: error },
        `hookline: could not read the ${queue.name} queue's message size limit (${error instanceof Error ? error.message : String(error)}); a delivery larger than the queue carries is handled in the request, as in synchronous mode.`,
      );
    },
  );
}

/** A warning about the set-up: to the `logger`, or without one to `console.warn` (`logger: false`: nowhere). */
function warn(state: ReceiverState, fields: object, message: string): void {
  const { logger, consoleNotes } = state.config;
  if (logger !== undefined) callUserCode(state, "the logger's warn()", () => logger.warn(fields, message));
  // On the console as the receiver's other notes are written: `[hookline] …`.
  else if (consoleNotes) console.warn(message.replace(/^hookline: /, '[hookline] '));
}
