/**
 * What a receiver says about a handler's `PermanentFailure`. The delivery is answered 200 (a worker
 * dead-letters its job) and the service stops retrying it, so a handler that gives up on every
 * delivery (a look-up in the wrong database, a schema that no longer fits the payload) looks like
 * success from outside. Like the refusals (refusal-notes.ts): without a `logger`, the first permanent
 * failure of each kind is written to `console.warn` with what it means and what to do, the further
 * ones counted once a minute; a `logger` hears each one at warn level; `logger: false` silences them.
 */
import type { Attempt } from './attempt';
import type { ReceiverLogger } from './logger';
import { createNotes } from './notes';
import { callUserCode, type UserCodeOwner } from './user-code';

/** The receiver's side of the notes. */
export interface PermanentNotes {
  /** Hears one permanent failure: writes it when it is the first of its kind (event and message), counts it otherwise. */
  hear(attempt: Pick<Attempt, 'mode' | 'delivery'>, message: string): void;
}

/** What telling of a permanent failure needs of a receiver (its state, receiver-state.ts, is one). */
export interface PermanentFailureTeller extends UserCodeOwner {
  readonly config: { readonly logger: ReceiverLogger | undefined };
  readonly permanentNotes: PermanentNotes | undefined;
}

/** Creates the notes of one receiver. `write` is where the lines go (`console.warn` unless a test says otherwise). */
export function createPermanentNotes(write: (line: string) => void = (line) => console.warn(line)): PermanentNotes {
  const notes = createNotes(
    write,
    (total, parts) =>
      `[hookline] in the last minute, handlers gave up on ${total} more ${total === 1 ? 'delivery' : 'deliveries'} with PermanentFailure: ${parts}`,
  );
  return {
    hear({ mode, delivery }, message) {
      const { event, deliveryId } = delivery;
      notes.hear(
        `${event}\n${message}`,
        event,
        () => `${event} (${shortened(message)})`,
        () =>
          `[hookline] a handler gave up on ${event} ${deliveryId} with PermanentFailure: ${message}. ${consequence(mode)} ` +
          'If it should have succeeded, the check that threw is wrong (a look-up in the wrong database, a schema that no longer ' +
          'fits the payload): fix it, then replay the delivery. (Further permanent failures of this kind are counted once a ' +
          'minute; pass a `logger` to see each one, or `logger: false` for none.)',
      );
    },
  };
}

/**
 * Tells of one permanent failure: the logger's warn line, or the notes (the default), or nothing
 * (`logger: false`). The `failed` hook hears it too, from settle.
 */
export function reportPermanentFailure(state: PermanentFailureTeller, attempt: Attempt, error: unknown): void {
  const { logger } = state.config;
  const message = error instanceof Error ? error.message : String(error);
  if (logger !== undefined) {
    const { event, deliveryId } = attempt.delivery;
    const fields = { err: error, permanent: true, event, deliveryId };
    const line = `hookline: a handler gave up on ${event} ${deliveryId} with PermanentFailure: ${message}. ${consequence(attempt.mode)}`;
    callUserCode(state, "the logger's warn()", () => logger.warn(fields, line));
    return;
  }
  state.permanentNotes?.hear(attempt, message);
}

function consequence(mode: Attempt['mode']): string {
  return mode === 'receive'
    ? 'It was answered 200, so the service will not retry it.'
    : 'Its job was dead-lettered, not retried (`hookline queue dead-letters` lists it).';
}

function shortened(message: string): string {
  return message.length > 80 ? `${message.slice(0, 79)}…` : message;
}
