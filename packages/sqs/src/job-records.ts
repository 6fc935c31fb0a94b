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
import { randomUUID } from 'node:crypto';
import type { IdempotencyStore } from '@hookline/core/adapter';

/** The dead record's token: every party must be able to release it, so it is not a secret. */
const DEAD = 'dead';

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
}

export function jobRecords(store: IdempotencyStore, keyPrefix: string, keepCompletedMs: number, keepDeadLettersMs: number): JobRecords {
  const jobKey = (id: string) => `${keyPrefix}job:${id}`;
  const deadKey = (id: string) => `${keyPrefix}dead:${id}`;

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
  };
}
