// The queue conformance suite at the platforms' limits (describe-queue-conformance.ts calls these): a
// delivery as large as the receiver takes (more than some queues carry), a job as large as the queue
// carries that ends in a dead letter with a long error, and handlers that run longer than the queue's
// visibility timeout (or lock) and the receiver's lease. Every backend passes them, whatever its limits.
import { randomUUID } from 'node:crypto';
import { createReceiver, memoryStore, type Receiver } from '@hookline/core';
import type { DeadLetter, DeliveryQueue } from '@hookline/core/adapter';
import { describe, expect } from 'vitest';
import { sign } from '../sign';
import type { QueueSettings, QueueUnderTest } from './describe-queue-conformance';

/** What the suite shares with these cases. */
export interface QueueSuite {
  readonly secret: string;
  readonly timeoutMs: number;
  subject(settings?: Partial<QueueSettings>): Promise<QueueUnderTest>;
  /** Closed after the test, last opened first. */
  opened: (() => unknown)[];
  eventually(what: string, check: () => boolean | Promise<boolean>, boundMs?: number): Promise<void>;
  lettersOf(queue: DeliveryQueue, deliveryId: string): Promise<DeadLetter[]>;
  test(title: string, body: () => Promise<void>, timeout?: number): void;
}

/** The receiver's default maxBodyBytes: what a delivery may weigh. */
const MAX_BODY_BYTES = 1_048_576;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A signed delivery whose body is exactly `bytes` long (padded in `data.note`), as `receiver.handle()` takes it. */
function signedOfSize(secret: string, bytes: number) {
  const deliveryId = `wdl_conformance${randomUUID().replaceAll('-', '')}`;
  const text = (note: string) =>
    JSON.stringify({
      event: 'line.status_changed',
      deliveryId,
      timestamp: new Date().toISOString(),
      data: { lineId: 'lin_conformance', note },
    });
  const body = new TextEncoder().encode(text('x'.repeat(Math.max(0, bytes - text('').length))));
  const headers = {
    'x-service-signature': sign(body, secret),
    'x-service-event': 'line.status_changed',
    'x-service-delivery-id': deliveryId,
  };
  return { deliveryId, input: { body, headers } };
}

export function describeQueueLimits(suite: QueueSuite): void {
  const { secret, test } = suite;

  /** A receiver in answer-fast mode on `queue` with its worker running, both closed after the test. */
  function working(queue: DeliveryQueue, options: { store?: ReturnType<typeof memoryStore>; leaseMs?: number } = {}): Receiver {
    const store = options.store ?? memoryStore();
    const receiver = createReceiver({
      secret,
      queue,
      store,
      logger: false,
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    });
    receiver.onError(() => {});
    suite.opened.push(() => worker.close());
    const worker = receiver.work({ concurrency: 2 });
    return receiver;
  }

  describe('at the limits', () => {
    test('never refuses a delivery as large as the receiver takes: it is queued and run, or handled in the request, once', async () => {
      const { queue } = await suite.subject();
      const receiver = working(queue);
      const runs: string[] = [];
      receiver.on('*', (delivery) => void runs.push(delivery.deliveryId));
      const { deliveryId, input } = signedOfSize(secret, MAX_BODY_BYTES);
      const first = await receiver.handle(input);
      // 202 where the queue carries it, 200 where it does not (handled in the request): never a 503.
      expect([200, 202]).toContain(first.status);
      await suite.eventually('the run', () => runs.length === 1);
      const again = await receiver.handle(input);
      expect(again.status).toBe(200);
      expect(JSON.parse(again.body)).toEqual({ ok: true, duplicate: true });
      await sleep(500);
      expect(runs).toEqual([deliveryId]);
    });

    test('dead-letters a job as large as the queue carries with its long error, after one run', async () => {
      const { queue } = await suite.subject({ attempts: 1 });
      const receiver = working(queue);
      const runs: string[] = [];
      receiver.on('*', (delivery) => {
        runs.push(delivery.deliveryId);
        throw new Error('€'.repeat(5_000)); // 15,000 bytes of UTF-8 in 5,000 characters
      });
      const limit = Math.min((await queue.bodyLimitBytes?.()) ?? MAX_BODY_BYTES, MAX_BODY_BYTES);
      const { deliveryId, input } = signedOfSize(secret, limit);
      expect((await receiver.handle(input)).status).toBe(202);
      await suite.eventually('the dead letter', async () => (await suite.lettersOf(queue, deliveryId)).length === 1);
      await sleep(1_000);
      expect(runs).toEqual([deliveryId]);
      const [letter] = await suite.lettersOf(queue, deliveryId);
      expect(letter).toMatchObject({ deliveryId, attempts: 1 });
      expect(letter?.lastError).toMatch(/^Error: €{100}/);
    });

    test(
      'runs a failing handler longer than the visibility timeout and the lease as one job: its tries, then one dead letter',
      async () => {
        const { queue } = await suite.subject({ attempts: 2, visibilityTimeoutMs: 1_000 });
        const store = memoryStore();
        const runs: number[] = [];
        // Two worker processes on one store: the other must not take the job while its handler runs.
        for (let i = 0; i < 2; i++) {
          working(queue, { store, leaseMs: 500 }).on('*', async () => {
            runs.push(Date.now());
            await sleep(1_500);
            throw new Error('downstream down');
          });
        }
        const { deliveryId, input } = signedOfSize(secret, 1_000);
        const accepting = createReceiver({ secret, queue, store, logger: false }).on('*', () => {});
        expect((await accepting.handle(input)).status).toBe(202);
        await suite.eventually('the dead letter', async () => (await suite.lettersOf(queue, deliveryId)).length === 1, suite.timeoutMs * 2);
        await sleep(1_500);
        expect(runs).toHaveLength(2);
        expect((await suite.lettersOf(queue, deliveryId))[0]).toMatchObject({ attempts: 2, lastError: 'Error: downstream down' });
      },
      suite.timeoutMs * 4 + 10_000,
    );
  });
}
