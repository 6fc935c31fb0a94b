// One message, one successor. A job moves on SQS by sending its next message (a retry, a wait, a
// hand-back, or its dead letter) and deleting the one it received. SQS hands a message out again when
// its consumer stopped before deleting it (a Lambda invocation killed after sending some records'
// next messages: Lambda then deletes none of the batch), when its visibility lapsed under a long
// handler, or now and then for no reason (standard queues deliver at least once). Were each receive
// free to send a next message, a job would fork into two chains, each spending its own tries: a
// failing job with `attempts: 2` ran four times.
//
// So the right to send a message's next message is claimed in the store first (`next:<message id>`,
// job-records.ts): one party gets it, under a fresh token; it sends the next message carrying that
// token (`hookline-after`), then holds the record for `keepCompletedMs`. Then:
//
// - a message received again whose record says `sent` is deleted unrun (its job went on without it);
//   one whose next message is being sent right now is left to come back;
// - a next message runs only while its token holds its predecessor's record. A sender that stopped
//   between sending and holding leaves its short lease to lapse; if the predecessor then comes back
//   and runs, its consumer has taken the record over, and the orphaned next message is deleted unrun
//   when it arrives. Either the predecessor runs on or its next message does, never both.
//
// A successful run sends nothing (the receiver's claim in its store makes a later receive of the same
// message a duplicate). The records cost two store calls per next message sent and one when it arrives,
// plus two per message received again; none on a first receive that succeeds.
import type { JobRecords } from './job-records';
import { ATTRIBUTES, type ReceivedMessage } from './message';

/** What becomes of the received message: deleted (`ack`), or left to come back after its visibility timeout (`keep`). */
export type Outcome = 'ack' | 'keep';

function afterOf(message: ReceivedMessage): { messageId: string; token: string } | undefined {
  const [messageId, token] = (message.attributes.get(ATTRIBUTES.after) ?? '').split(' ');
  return messageId && token ? { messageId, token } : undefined;
}

/**
 * Whether this message carries its job: undefined when it does (run it), else what to do with it. A
 * next message whose sender lost the succession is a fork: deleted unrun. A message handed out again
 * whose next message exists is deleted; one whose next message is being sent is left to come back.
 */
export async function stillCarries(records: JobRecords, message: ReceivedMessage): Promise<Outcome | undefined> {
  const after = afterOf(message);
  if (after !== undefined && !(await records.holdSuccession(after.messageId, after.token))) return 'ack';
  if (message.receiveCount <= 1) return undefined;
  const succession = await records.successionOf(message.messageId);
  if (succession === 'sent') return 'ack';
  return succession === 'sending' ? 'keep' : undefined;
}

/**
 * Sends the message's next message (`send` is given the `hookline-after` value to carry) once the
 * right to is claimed, and says what becomes of the received message. Another party's next message
 * already sent: `ack`, nothing sent; being sent: `keep` (it comes back, and is deleted then).
 */
export async function sendSuccessor(
  records: JobRecords,
  message: ReceivedMessage,
  token: string,
  send: (after: string) => Promise<void>,
  onError: (error: Error) => void,
): Promise<Outcome> {
  const claimed = await records.claimSuccession(message.messageId, token);
  if (claimed === 'sent') return 'ack';
  if (claimed === 'sending') return 'keep';
  try {
    await send(`${message.messageId} ${token}`);
  } catch (error) {
    await records.dropSuccession(message.messageId, token).catch(() => {});
    throw error;
  }
  // Not held (the store failed now): the next message holds it when it arrives, its token still the owner.
  await records.holdSuccession(message.messageId, token).catch((error: unknown) => onError(error as Error));
  return 'ack';
}
