import { type QueuedDelivery, queuedDeliveryJson, withinTime } from '@hookline/core/adapter';
import { Job, type JobJson, type Queue } from 'bullmq';
import { retryDeadLetter } from './revive';

/** A delivery waiting for the end of the event-loop turn to be written with the others of its burst. */
interface PendingEnqueue {
  jobId: string;
  job: QueuedDelivery;
  resolve(result: { duplicate: boolean }): void;
  reject(error: unknown): void;
}

/** The part of an ioredis connection's socket used to send a burst's commands in one write. */
interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * What the queue holds of each of the burst's jobs, in one command: per job, in order, 0 (nothing),
 * 1 (a job in any state but failed) or 2 (a dead letter: the job is in the failed set). KEYS: the
 * failed set, then the job hashes; ARGV: the jobIds. Sent as EVAL (Redis caches the compiled script
 * by its hash), never as an EVALSHA that could fail with NOSCRIPT and be sent again after the adds,
 * when the answer would be the state after them.
 */
const HELD_JOBS = `local held = {}
for i = 2, #KEYS do
  if redis.call('HEXISTS', KEYS[i], 'data') == 0 then held[i - 1] = 0
  elseif redis.call('ZSCORE', KEYS[1], ARGV[i - 1]) then held[i - 1] = 2
  else held[i - 1] = 1 end
end
return held`;

const ABSENT = 0;
const DEAD_LETTER = 2;

/**
 * Enqueues that arrive in the same event-loop turn go to Redis in one socket write. Under load they
 * come in bursts: in one turn node reads every connection that became readable, and a receipt in
 * answer-fast mode reaches its enqueue in the turn its body ends (no store call comes first), so
 * requests read together enqueue together; `setImmediate` runs once that reading is done. Sent one by
 * one, each enqueue would cost this process a write of its own (the duplicate check and the add) and
 * Redis a read; corked together, a burst is one write holding one duplicate check and one add per
 * job. (A dead letter found by the check is revived after the write: see `write`.) A lone delivery
 * waits for the end of the current turn only.
 *
 * Measured against the same code flushing each enqueue at once (`bench/src/queue/`, accepted
 * deliveries/s, interleaved rounds in one run; bench/README.md): 1.16× and 1.33× the deliveries/s in
 * two runs, at 62–63 against 79–84 µs of the web process's CPU per delivery.
 *
 * The adds go through BullMQ's own add (`addJobToTransaction`, the script `Queue.add` runs), written
 * synchronously and in order on the queue's connection, and each job gets its own answer or error.
 * No ioredis pipeline is built for a burst: one copies every script BullMQ defines onto a new object,
 * tens of microseconds each time. A burst is bounded by `timeoutMs` as a whole.
 *
 * The add is handed the job's JSON form directly, the fields `Job#asJSON()` gives it (name, data,
 * options, timestamp), rather than a `Job` made and serialised per delivery: every job of the queue
 * has the same options but its id, so BullMQ's `Job` normalises them once. A `Job` object costs ~2 µs
 * to make and another ~0.7 µs to serialise beside the payload, about a tenth of this process's CPU per
 * queued delivery; the stored job is the same (bullmq-queue.test.ts compares it with one `Queue.add`
 * stores). The payload is `queuedDeliveryJson(job)`: for a delivery the receiver queued, its JSON
 * made around the verified body's text, so nothing re-serialises the parsed delivery either.
 */
export function enqueueBatcher(queue: Queue, timeoutMs: number): (jobId: string, job: QueuedDelivery) => Promise<{ duplicate: boolean }> {
  let pending: PendingEnqueue[] = [];
  // The queue's default options as BullMQ's Job normalises them (attempts, backoff): the same for every job.
  const options = new Job(queue, 'hookline', {}, { ...queue.defaultJobOptions }).opts;

  function flush(): void {
    const batch = pending;
    pending = [];
    const what =
      batch.length === 1 ? `bullmq enqueue of ${batch[0]?.job.delivery.deliveryId}` : `bullmq enqueue of ${batch.length} deliveries`;
    withinTime(write(batch), timeoutMs, what, 'Redis').then(
      (outcomes) => {
        for (let i = 0; i < batch.length; i++) {
          const entry = batch[i] as PendingEnqueue;
          const outcome = outcomes[i];
          if (outcome instanceof Error) entry.reject(outcome);
          else entry.resolve({ duplicate: outcome === true });
        }
      },
      (error: unknown) => {
        for (const entry of batch) entry.reject(error);
      },
    );
  }

  /**
   * Adds the burst's jobs; resolves with, per entry, whether its job was in the queue already or the
   * error its add failed with. BullMQ's add answers a known jobId with the existing job and no sign
   * that it was one, so the burst's job hashes are looked up first, in the same write: Redis runs the
   * commands of one connection in order, so the answer is the state before these adds. A jobId twice
   * in one burst is one job: its later entries are duplicates of the first. A later burst on this
   * connection is checked after this one's adds, so it finds their jobs. Two processes that enqueue
   * one deliveryId at the same moment (the service's retry reaching another web process while the
   * first still enqueues) may both be checked before either add: both answer "not a duplicate" and
   * their receivers both answer 202, over one job (the second add finds the first's job and adds
   * nothing), whose handlers the worker's claim runs once.
   *
   * A job the lookup found in the failed set is a dead letter, which the add left as it was: it is
   * retried afterwards with the new payload and a fresh set of tries (the contract's revival), and
   * answers "not a duplicate" unless a concurrent enqueue or replay revived it first. That costs a few
   * more round trips, for those jobs only.
   */
  async function write(batch: PendingEnqueue[]): Promise<(boolean | Error)[]> {
    const client = await queue.backend.client;
    const firstOf = new Map<string, number>();
    const keys: string[] = [queue.keys.failed as string];
    const ids: string[] = [];
    for (let i = 0; i < batch.length; i++) {
      const { jobId } = batch[i] as PendingEnqueue;
      if (firstOf.has(jobId)) continue;
      firstOf.set(jobId, i);
      keys.push(queue.toKey(jobId));
      ids.push(jobId);
    }
    const socket = (client as unknown as { stream?: Partial<Corkable> }).stream;
    const cork = typeof socket?.cork === 'function' && typeof socket.uncork === 'function' ? (socket as Corkable) : undefined;
    const payloads: string[] = [];
    cork?.cork();
    let held: Promise<number[]>;
    const added: Promise<unknown>[] = [];
    try {
      held = client.runCommand('eval', [HELD_JOBS, keys.length, ...keys, ...ids]);
      held.catch(() => {}); // awaited below, unless an add throws first
      for (const [jobId, index] of firstOf) {
        const { job } = batch[index] as PendingEnqueue;
        const opts = { ...options, jobId };
        const data = queuedDeliveryJson(job);
        payloads.push(data);
        const json = { id: jobId, name: job.delivery.event, data, opts, timestamp: Date.now() } as JobJson;
        const add = queue.backend.addJobToTransaction(client, json, jobId);
        // What Queue.add tells its listeners, for code watching the queue this package exposes.
        added.push(
          queue.listenerCount('waiting') > 0 ? add.then(() => queue.emit('waiting', new Job(queue, json.name, job, opts, jobId))) : add,
        );
      }
    } finally {
      cork?.uncork();
    }
    const outcomes = await Promise.allSettled(added);
    const found = await held;
    const answers = new Map<string, boolean | Error>();
    const revivals: Promise<void>[] = [];
    let at = 0;
    for (const jobId of firstOf.keys()) {
      const outcome = outcomes[at] as PromiseSettledResult<unknown>;
      const state = found[at];
      if (outcome.status === 'rejected') answers.set(jobId, asError(outcome.reason));
      else if (state !== DEAD_LETTER) answers.set(jobId, state !== ABSENT);
      else {
        const data = payloads[at] as string;
        revivals.push(
          retryDeadLetter(queue, jobId, { data }).then(
            (revived) => void answers.set(jobId, !revived),
            (error: unknown) => void answers.set(jobId, asError(error)),
          ),
        );
      }
      at++;
    }
    await Promise.all(revivals);
    return batch.map(({ jobId }, index) => {
      const answer = answers.get(jobId) as boolean | Error;
      return firstOf.get(jobId) === index || answer instanceof Error ? answer : true;
    });
  }

  return (jobId, job) =>
    new Promise((resolve, reject) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ jobId, job, resolve, reject });
    });
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
