// Dead letters live in the dead-letter queue, which SQS can only receive from: it cannot list a
// queue, nor fetch a message by id. So `deadLetters()` and `replay()` read the whole dead-letter
// queue: receive every message (long polls of 1 s, so that an empty answer means empty on a
// standard queue too), keep each invisible while the scan runs, act on the ones it wants, and make
// the others visible again at the end. Two scans at the same moment each see part of the queue; a
// replay that meets a listing's hidden letters finds nothing (and says so). The dead-letter queue
// must therefore have no redrive policy of its own (each scan counts as a receive).
import { ChangeMessageVisibilityBatchCommand, DeleteMessageCommand, type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { type DeadLetter, scopedDeliveryId } from '@hookline/core/adapter';
import type { JobRecords } from './job-records';
import { ATTRIBUTES, identityOf, numberOf, payloadOf, type ReceivedMessage, readAttribute } from './message';
import { bounded, type SqsClientLike } from './sqs-client';

/** How long a scan keeps the letters it received invisible (they are made visible again when it ends). */
const SCAN_VISIBILITY_S = 60;
/** The most messages one scan reads: a bound on its time. */
const MAX_SCAN = 20_000;

export interface DeadLetterAccess {
  client: SqsClientLike;
  deadLetterQueueUrl(): Promise<string>;
  timeoutMs: number;
  records: JobRecords | undefined;
  /** Sends a replayed letter to the queue as a fresh job (no tries spent) under `token`. */
  sendFresh(letter: ReceivedMessage, token: string | undefined): Promise<void>;
}

/** A received message as the consumer and the scans read it; `receivedAt`: when the receive was asked for. */
export function received(message: Message, receivedAt = Date.now()): ReceivedMessage {
  const attributes = new Map<string, string>();
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {}))
    if (value.StringValue !== undefined) attributes.set(name, readAttribute(value.DataType, value.StringValue));
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? '1') || 1,
    sentAt: Number(message.Attributes?.SentTimestamp ?? Date.now()) || Date.now(),
    receivedAt,
    attributes,
  };
}

interface Letter {
  message: ReceivedMessage;
  scopedId: string;
  listed: DeadLetter;
  /** Put here by the consumer (with why), not moved by the queue's redrive policy. */
  ours: boolean;
}

function letterOf(message: ReceivedMessage): Letter {
  const { deliveryId, scope, event } = identityOf(message, payloadOf(message.body));
  const error = message.attributes.get(ATTRIBUTES.error);
  const tries = numberOf(message, ATTRIBUTES.tries) ?? 0;
  const listed: DeadLetter =
    error !== undefined
      ? {
          deliveryId,
          event,
          attempts: Math.max(tries, 1),
          lastError: error,
          failedAt: new Date(numberOf(message, ATTRIBUTES.failedAt) ?? message.sentAt),
        }
      : {
          deliveryId,
          event,
          attempts: tries + 1,
          lastError: `moved here by the queue's redrive policy after ${message.receiveCount - 1} receives without a result (its consumer crashed or timed out each time)`,
          failedAt: new Date(message.sentAt),
        };
  if (scope !== undefined) listed.scope = scope;
  return { message, scopedId: scopedDeliveryId({ deliveryId, scope }), listed, ours: error !== undefined };
}

/**
 * Receives every message of the dead-letter queue (until `done()` says enough), handing each to
 * `visit`, which answers whether it removed the message or keeps it. The kept ones are made visible
 * again before this resolves.
 */
async function scan(
  access: DeadLetterAccess,
  visit: (letter: Letter) => Promise<'removed' | 'kept'>,
  done: () => boolean = () => false,
): Promise<void> {
  const url = await access.deadLetterQueueUrl();
  const kept: ReceivedMessage[] = [];
  const seen = new Set<string>();
  try {
    for (let read = 0; read < MAX_SCAN; ) {
      const { Messages } = await bounded<{ Messages?: Message[] }>(
        access.client,
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          VisibilityTimeout: SCAN_VISIBILITY_S,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
        }),
        access.timeoutMs,
        'reading the dead-letter queue',
      );
      if (Messages === undefined || Messages.length === 0) return;
      read += Messages.length;
      for (const raw of Messages) {
        const message = received(raw);
        if (done() || seen.has(message.messageId)) {
          kept.push(message);
          continue;
        }
        seen.add(message.messageId);
        if ((await visit(letterOf(message))) === 'kept') kept.push(message);
      }
      if (done()) return;
    }
  } finally {
    await release(access, url, kept);
  }
}

/** Makes the scanned letters visible again; one that fails comes back after SCAN_VISIBILITY_S anyway. */
async function release(access: DeadLetterAccess, url: string, messages: ReceivedMessage[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    const entries = messages
      .slice(i, i + 10)
      .map((message, index) => ({ Id: `m${index}`, ReceiptHandle: message.receiptHandle, VisibilityTimeout: 0 }));
    await bounded(
      access.client,
      new ChangeMessageVisibilityBatchCommand({ QueueUrl: url, Entries: entries }),
      access.timeoutMs,
      'releasing scanned dead letters',
    ).catch(() => {});
  }
}

async function remove(access: DeadLetterAccess, message: ReceivedMessage): Promise<void> {
  const url = await access.deadLetterQueueUrl();
  await bounded(
    access.client,
    new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.receiptHandle }),
    access.timeoutMs,
    'deleting a dead letter',
  );
}

/** Whether a letter is its delivery's current one: a revived delivery's old letter is not. */
async function current(access: DeadLetterAccess, letter: Letter): Promise<boolean> {
  return access.records === undefined || !letter.ours || (await access.records.isDead(letter.scopedId));
}

/** Every current dead letter, newest first; stale ones (their delivery was revived since, or a newer letter exists) are removed. */
export async function listDeadLetters(access: DeadLetterAccess, limit: number): Promise<DeadLetter[]> {
  const newest = new Map<string, Letter>();
  await scan(access, async (letter) => {
    if (!(await current(access, letter))) {
      await remove(access, letter.message);
      return 'removed';
    }
    const other = newest.get(letter.scopedId);
    if (other !== undefined) {
      const [older, newer] = other.listed.failedAt <= letter.listed.failedAt ? [other, letter] : [letter, other];
      newest.set(letter.scopedId, newer);
      await remove(access, older.message);
      return older === letter ? 'removed' : 'kept';
    }
    newest.set(letter.scopedId, letter);
    return 'kept';
  });
  return [...newest.values()]
    .map((letter) => letter.listed)
    .sort((a, b) => b.failedAt.getTime() - a.failedAt.getTime())
    .slice(0, Math.max(0, limit));
}

/** Puts back the dead letters `wanted` accepts; resolves with how many. `once` stops after the first. */
export async function replayLetters(access: DeadLetterAccess, wanted: (scopedId: string) => boolean, once: boolean): Promise<number> {
  let replayed = 0;
  await scan(
    access,
    async (letter) => {
      if (!wanted(letter.scopedId)) return 'kept';
      if (!(await current(access, letter))) {
        await remove(access, letter.message);
        return 'removed';
      }
      let token: string | undefined;
      if (access.records !== undefined) {
        token = await access.records.takeJob(letter.scopedId, letter.message.attributes.get(ATTRIBUTES.token));
        if (token === undefined) {
          // A live job of the delivery holds its record (revived meanwhile): this letter is stale.
          await remove(access, letter.message);
          return 'removed';
        }
      }
      await access.sendFresh(letter.message, token);
      await remove(access, letter.message);
      await access.records?.clearDead(letter.scopedId);
      replayed += 1;
      return 'removed';
    },
    () => once && replayed > 0,
  );
  return replayed;
}
