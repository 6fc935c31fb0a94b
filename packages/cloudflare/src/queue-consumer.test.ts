// Answer-fast mode on Cloudflare end to end, in workerd through miniflare: an accepting Worker whose
// receiver (Durable Object store, cloudflareQueue()) answers 202 once the delivery is in the queue, and
// a consumer Worker whose queue() handler is queueConsumer() with a receiver on the same store. Then
// what the contract suite cannot see: Queues' own dead-letter queue, a message no producer of ours
// wrote, the job records' rules (a consumer faster than its producer's record, a revival's grace), and
// the limits (128 KB messages, receiver.work() in a Worker).
import { randomUUID } from 'node:crypto';
import { createDelivery, createSignedPayload } from '@hookline/testing';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { JobRequest } from './job-protocol';
import { E2E_QUEUE } from './queue-test-queues.test-support';
import { SECRET, startQueueWorkers } from './queue-workerd.test-support';

const workers = await startQueueWorkers();
afterAll(() => workers.dispose());

const WAIT = { timeout: 20_000, interval: 50 };

async function post(event: string, data: Record<string, unknown>, delivery = createDelivery(event, data)) {
  const payload = createSignedPayload(delivery, SECRET);
  const body = typeof payload.body === 'string' ? payload.body : new Uint8Array(payload.body);
  const response = await workers.mf.dispatchFetch('http://producer.test/webhooks', { method: 'POST', headers: payload.headers, body });
  return { status: response.status, body: (await response.json()) as unknown, delivery };
}

const runsOf = (deliveryId: string) => workers.e2eRuns.filter((run) => run.deliveryId === deliveryId);
const deadLetters = async (settings = E2E_QUEUE) =>
  (await workers.producer('dead-letters', settings, { limit: 1000 })) as { deliveryId: string; attempts: number; lastError: string }[];

describe('answer-fast mode on Cloudflare: accepting Worker → Queue → consumer Worker, Durable Object store', () => {
  it('answers 202 queued once the delivery is in the queue, runs its handler once in the consumer, and answers a repeat as a duplicate', async () => {
    const { status, body, delivery } = await post('message.delivered', { note: 'slow' });
    expect({ status, body }).toEqual({ status: 202, body: { ok: true, queued: true } });
    await vi.waitFor(() => expect(runsOf(delivery.deliveryId)).toHaveLength(1), WAIT);
    const again = await post('message.delivered', {}, delivery);
    expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // the slow handler finished; nothing more runs
    expect(runsOf(delivery.deliveryId)).toHaveLength(1);
  });

  it('retries a failed handler with its backoff and handles it once it succeeds, no dead letter', async () => {
    const { status, delivery } = await post('message.delivered', { note: 'flaky' });
    expect(status).toBe(202);
    await vi.waitFor(() => expect(runsOf(delivery.deliveryId).map((run) => run.attempt)).toEqual([1, 2]), WAIT);
    expect((await deadLetters()).filter((letter) => letter.deliveryId === delivery.deliveryId)).toEqual([]);
  });

  it("dead-letters a PermanentFailure at once; the service's repeat of the delivery puts it back and runs it", async () => {
    const { delivery } = await post('message.delivered', { note: 'permanent-once' });
    await vi.waitFor(
      async () =>
        expect((await deadLetters()).filter((letter) => letter.deliveryId === delivery.deliveryId)).toEqual([
          expect.objectContaining({ attempts: 1, lastError: 'PermanentFailure: no such message (this time)' }),
        ]),
      WAIT,
    );
    const repeat = await post('message.delivered', {}, delivery);
    expect({ status: repeat.status, body: repeat.body }).toEqual({ status: 202, body: { ok: true, queued: true } });
    await vi.waitFor(() => expect(runsOf(delivery.deliveryId)).toHaveLength(2), WAIT);
    await vi.waitFor(async () => expect((await deadLetters()).map((letter) => letter.deliveryId)).not.toContain(delivery.deliveryId), WAIT);
  });

  it("keeps one line's deliveries from running at once: they wait without spending tries, all handled once, none dead", async () => {
    // attempts 3: six colliding deliveries would use their three tries up if waiting spent them.
    const lineId = `lin_${randomUUID().slice(0, 8)}`;
    const sent = await Promise.all(Array.from({ length: 6 }, () => post('line.status_changed', { lineId })));
    expect(sent.map(({ status }) => status)).toEqual(Array(6).fill(202));
    const ids = sent.map(({ delivery }) => delivery.deliveryId);
    await vi.waitFor(() => expect(workers.e2eRuns.filter((run) => ids.includes(run.deliveryId))).toHaveLength(6), {
      ...WAIT,
      timeout: 40_000,
    });
    const runs = workers.e2eRuns.filter((run) => ids.includes(run.deliveryId));
    expect(new Set(runs.map((run) => run.deliveryId)).size).toBe(6);
    expect(runs.some((run) => run.overlap)).toBe(false);
    expect((await deadLetters()).filter((letter) => ids.includes(letter.deliveryId))).toEqual([]);
  }, 60_000);

  it('records as a dead letter what Queues moved to its dead-letter queue (a consumer that crashed each time), listable and replayable', async () => {
    const job = { delivery: createDelivery('message.delivered', { note: 'crash' }), receivedAt: Date.now(), secretIndex: 0 };
    expect(await workers.producer('enqueue', workers.crashing, { job })).toEqual({ duplicate: false });
    await vi.waitFor(
      async () =>
        expect(await deadLetters(workers.crashing)).toEqual([
          expect.objectContaining({
            deliveryId: job.delivery.deliveryId,
            event: 'message.delivered',
            lastError: expect.stringMatching(/dead-letter queue crashing-dlq/),
          }),
        ]),
      WAIT,
    );
    expect(await workers.producer('enqueue', workers.crashing, { job })).toEqual({ duplicate: false }); // revived
    expect(await workers.producer('replay', workers.crashing, { ref: job.delivery.deliveryId })).toBe(false); // not dead now
  });

  it('dead-letters a message no cloudflareQueue() wrote under its message id, naming it corrupt, and runs no handler', async () => {
    const before = workers.e2eRuns.length;
    const known = new Set((await deadLetters()).map((letter) => letter.deliveryId));
    await workers.producer('raw', E2E_QUEUE, { body: 'not json at all' });
    await vi.waitFor(
      async () =>
        expect((await deadLetters()).filter((letter) => !known.has(letter.deliveryId))).toEqual([
          expect.objectContaining({ event: 'unknown', attempts: 1, lastError: 'corrupt job: the message body is not JSON' }),
        ]),
      WAIT,
    );
    expect(workers.e2eRuns.length).toBe(before);
  });
});

describe('the job records in the Durable Object', () => {
  const name = `records-${randomUUID().slice(0, 8)}`;
  async function job<T>(request: JobRequest): Promise<T> {
    const response = await workers.mf.dispatchFetch('http://producer.test/job', {
      method: 'POST',
      body: JSON.stringify({ name, shard: 0, request }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as T;
  }
  const dead = { deliveryId: 'wdl_records', event: 'message.delivered', attempts: 1, lastError: 'down', job: '{}' };

  it('runs a message whose producer has not recorded it yet, and then takes that record as the same job', async () => {
    const key = `wdl_${randomUUID().replaceAll('-', '')}`;
    expect(await job({ op: 'job.begin', key, token: 'first', sentAt: Date.now(), graceMs: 60_000 })).toBe('run');
    expect(await job({ op: 'job.accept', key, token: 'first' })).toEqual({ duplicate: false });
    expect(await job({ op: 'job.accept', key, token: 'second' })).toEqual({ duplicate: true });
    expect(await job({ op: 'job.begin', key, token: 'second', sentAt: Date.now(), graceMs: 60_000 })).toBe('drop');
    expect(await job({ op: 'job.done', key, token: 'second', keepMs: 60_000 })).toBe(false);
    expect(await job({ op: 'job.done', key, token: 'first', keepMs: 60_000 })).toBe(true);
    expect(await job({ op: 'job.begin', key, token: 'first', sentAt: Date.now(), graceMs: 60_000 })).toBe('drop');
    expect(await job({ op: 'job.accept', key, token: 'third' })).toEqual({ duplicate: true });
  });

  it("has a dead letter's new message wait for its revival within the grace, and run once it landed", async () => {
    const key = `wdl_${randomUUID().replaceAll('-', '')}`;
    expect(await job({ op: 'job.accept', key, token: 'first' })).toEqual({ duplicate: false });
    expect(await job({ op: 'job.dead', key, token: 'first', keepMs: 60_000, dead })).toBe(true);
    expect(await job({ op: 'job.begin', key, token: 'first', sentAt: Date.now(), graceMs: 60_000 })).toBe('drop');
    expect(await job({ op: 'job.begin', key, token: 'new', sentAt: Date.now(), graceMs: 60_000 })).toBe('wait');
    expect(await job({ op: 'job.begin', key, token: 'stale', sentAt: Date.now() - 120_000, graceMs: 60_000 })).toBe('drop');
    expect(await job({ op: 'job.revive', key, token: 'not-the-dead-one', next: 'new' })).toBe(false);
    expect(await job({ op: 'job.revive', key, token: 'first', next: 'new' })).toBe(true);
    expect(await job({ op: 'job.begin', key, token: 'new', sentAt: Date.now(), graceMs: 60_000 })).toBe('run');
    const page = await job<{ letters: { key: string }[] }>({ op: 'job.deadLetters', limit: 100 });
    expect(page.letters.map((letter) => letter.key)).not.toContain(key);
  });

  it('lists dead letters newest first, page by page, and the alarm deletes completions and dead letters after their time', async () => {
    const keys = Array.from({ length: 3 }, () => `wdl_${randomUUID().replaceAll('-', '')}`);
    for (const key of keys) {
      await job({ op: 'job.dead', key, token: 't', keepMs: 3_000, dead: { ...dead, deliveryId: key } });
      await new Promise((resolve) => setTimeout(resolve, 5)); // distinct failedAt
    }
    const first = await job<{ letters: { key: string }[]; next?: string }>({ op: 'job.deadLetters', limit: 2 });
    expect(first.letters.map((letter) => letter.key)).toEqual([keys[2], keys[1]]);
    const second = await job<{ letters: { key: string }[]; next?: string }>({
      op: 'job.deadLetters',
      limit: 2,
      before: first.next as string,
    });
    expect(second.letters.map((letter) => letter.key)).toEqual([keys[0]]);
    const completed = `wdl_${randomUUID().replaceAll('-', '')}`;
    await job({ op: 'job.done', key: completed, token: 't', keepMs: 3_000 });
    expect(await job({ op: 'job.accept', key: completed, token: 'u' })).toEqual({ duplicate: true });
    // Each record with its purge entry, and each dead letter with its listing entry.
    const stored = async (key: string) => {
      const response = await workers.mf.dispatchFetch('http://producer.test/inspect', {
        method: 'POST',
        body: JSON.stringify({ name, shard: 0, key }),
      });
      return (await response.json()) as string[];
    };
    expect((await Promise.all(keys.map(stored))).map((entries) => entries.length)).toEqual([3, 3, 3]);
    expect(await stored(completed)).toHaveLength(2);
    await vi.waitFor(async () => expect((await Promise.all([...keys, completed].map(stored))).flat()).toEqual([]), WAIT);
    expect(await job({ op: 'job.accept', key: completed, token: 'u' })).toEqual({ duplicate: false });
  });

  it('refuses a key the object cannot hold as data (422)', async () => {
    const response = await workers.mf.dispatchFetch('http://producer.test/job', {
      method: 'POST',
      body: JSON.stringify({ name, shard: 0, request: { op: 'job.accept', key: 'x'.repeat(3000), token: 't' } }),
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: expect.stringMatching(/longer than 2027 bytes/) });
  });
});

describe('cloudflareQueue() limits', () => {
  it('refuses a job over 128 KB before sending it with JOB_TOO_LARGE, for the receiver to handle in the request', async () => {
    const job = { delivery: createDelivery('message.delivered', { note: 'é'.repeat(70_000) }), receivedAt: Date.now(), secretIndex: 0 };
    await expect(workers.producer('enqueue', E2E_QUEUE, { job })).rejects.toThrow(
      expect.objectContaining({
        code: 'JOB_TOO_LARGE',
        message: expect.stringMatching(/is 140\d{3} bytes; Cloudflare Queues takes messages of at most 128 KB/),
      }),
    );
    expect(await workers.producer('body-limit', E2E_QUEUE)).toBe(123_788);
  });

  it('refuses receiver.work() in a Worker with a CONFIGURATION_ERROR that points to queueConsumer()', async () => {
    await expect(workers.producer('work', E2E_QUEUE)).rejects.toThrow(
      expect.objectContaining({ code: 'CONFIGURATION_ERROR', message: expect.stringMatching(/queueConsumer\(receiver, \{ queue \}\)/) }),
    );
  });
});
