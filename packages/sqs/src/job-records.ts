// SQS can neither tell a producer that it already holds a message for a delivery, nor look a message
// up by anything but a receipt handle, so the queue keeps two records per delivery in an idempotency
// store (the receiver's, typically: DynamoDB on Lambda), through the store contract's own methods:
//
// - the job record (`job:<scoped id>`), claimed by `enqueue` with a fresh token that travels on the
//   message and held for `keepCompletedMs`: while it is held, enqueueing the delivery again is a
//   duplicate (the job waits, runs or ran). The consumer releases it when it dead-letters the job, so
//   the next enqueue of that delivery (the service replaying it) claims it again and revives the job.
// - the dead record (`dead:<scoped id>`), held under one fixed token while the delivery's latest dead
//   letter is current. A revival releases it; a dead letter whose record is not held any more belongs
//   to a delivery that was revived since, and `deadLetters()` drops it instead of listing it.
//
// And one record per message that was ended by a next one (successors.ts says why):
//
// - the succession record (`next:<message id>`), claimed by whoever sends the message's next message
//   (a retry, a wait, a hand-back, its dead letter) under a fresh token with a short lease that covers
//   the send, then held for `keepCompletedMs` once the next message is out. Only one party ever sends a
//   message's successor, and the successor carries the token: it runs only while that token holds the
//   record.
import { randomUUID } from 'node:crypto';
import type { ClaimResult, IdempotencyStore } from '@hookline/core/adapter';

/** The dead record's token: every party must be able to release it, so it is not a secret. */
const DEAD = 'dead';

/** What the succession record of a message says. */
export type Succession = 'none' | 'sending' | 'sent';

export interface JobRecords {
  /** Claims the job record: its token (a new job), or undefined while the delivery's job is held. */
  claimJob(scopedId: string): Promise<{ token: string; revived: number | undefined } | undefined>;
  /** Releases the job record if `token` holds it (the enqueue failed, or the job was dead-lettered). */
  releaseJob(scopedId: string, token: string | undefined): Promise<void>;
  /** Takes over the job record for a replay: claims it, or releases the letter's token first. Undefined when a live job holds it. */
  takeJob(scopedId: string, letterToken: string | undefined): Promise<string | undefined>;
  markDead(scopedId: string): Promise<void>;
  /** Whether the delivery's dead letter is current (its dead record is held), keeping it held. */
  isDead(scopedId: string): Promise<boolean>;
  clearDead(scopedId: string): Promise<void>;
  /** Claims the right to send `messageId`'s next message under `token`: `none` (claimed: send it), or who has. */
  claimSuccession(messageId: string, token: string): Promise<Succession>;
  /** The next message is out: the record holds for `keepCompletedMs`. False when `token` lost it meanwhile. */
  holdSuccession(messageId: string, token: string): Promise<boolean>;
  /** The next message could not be sent: the right to send it goes. */
  dropSuccession(messageId: string, token: string): Promise<void>;
  /** Whether `messageId` has a next message (`sent`), one is being sent (`sending`), or neither, without claiming it. */
  successionOf(messageId: string): Promise<Succession>;
}

export function jobRecords(
  store: IdempotencyStore,
  prefix: string,
  keepCompletedMs: number,
  keepDeadLettersMs: number,
  /** How long a sender may take to send a next message: the succession record's first lease. */
  sendLeaseMs: number,
): JobRecords {
  const jobKey = (id: string) => `${prefix}job:${id}`;
  const deadKey = (id: string) => `${prefix}dead:${id}`;
  const nextKey = (messageId: string) => `${prefix}next:${messageId}`;

  // A held record whose lease runs longer than a send could take was held for keepCompletedMs: sent.
  const heldAs = (result: ClaimResult): Succession =>
    result.state === 'completed' || (result.state === 'in_progress' && result.retryAfterMs > sendLeaseMs) ? 'sent' : 'sending';

  async function claim(id: string): Promise<{ token: string; attempt: number } | undefined> {
    const token = randomUUID();
    const result = await store.claim(jobKey(id), token, keepCompletedMs);
    return result.state === 'acquired' ? { token, attempt: result.attempt } : undefined;
  }

  return {
    async claimJob(id) {
      const claimed = await claim(id);
      if (claimed === undefined) return undefined;
      // Claimed before: the job was dead-lettered (or its record lapsed). Its letter, if any, is stale now.
      if (claimed.attempt > 1) await store.release(deadKey(id), DEAD);
      return { token: claimed.token, revived: claimed.attempt > 1 ? claimed.attempt : undefined };
    },
    async releaseJob(id, token) {
      if (token !== undefined) await store.release(jobKey(id), token);
    },
    async takeJob(id, letterToken) {
      const first = await claim(id);
      if (first !== undefined) return first.token;
      // A letter the redrive policy moved (its consumer never released the record), or one whose
      // consumer stopped between the dead letter and the release: its own token frees the record.
      if (letterToken === undefined || !(await store.release(jobKey(id), letterToken))) return undefined;
      return (await claim(id))?.token;
    },
    async markDead(id) {
      if (!(await store.extend(deadKey(id), DEAD, keepDeadLettersMs))) await store.claim(deadKey(id), DEAD, keepDeadLettersMs);
    },
    async isDead(id) {
      return store.extend(deadKey(id), DEAD, keepDeadLettersMs);
    },
    async clearDead(id) {
      await store.release(deadKey(id), DEAD);
    },
    async claimSuccession(messageId, token) {
      const result = await store.claim(nextKey(messageId), token, sendLeaseMs);
      return result.state === 'acquired' ? 'none' : heldAs(result);
    },
    holdSuccession: (messageId, token) => Promise.resolve(store.extend(nextKey(messageId), token, keepCompletedMs)),
    async dropSuccession(messageId, token) {
      await store.release(nextKey(messageId), token);
    },
    async successionOf(messageId) {
      const probe = randomUUID();
      const result = await store.claim(nextKey(messageId), probe, sendLeaseMs);
      if (result.state !== 'acquired') return heldAs(result);
      // Released at once: a next message sent by a consumer that stopped before holding the record
      // (its lease lapsed) no longer finds its token there, and gives way to this run.
      await store.release(nextKey(messageId), probe);
      return 'none';
    },
  };
}
