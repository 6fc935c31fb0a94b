// Node's side of the queue tests: the accepting and the consumer Worker in one workerd (through
// miniflare), the queues between them (producer and consumer bindings, as wrangler.toml declares them),
// and the NODE service binding through which the consumer Worker hands jobs to processors registered
// here. A DeliveryQueue for the conformance suite stands on top: enqueue and the dead-letter methods
// are cloudflareQueue()'s, run in the accepting Worker; work() registers a processor the consumer
// Worker's queue() handler calls for each message it gets.
import type { JobResult, QueueJob, QueueWorker } from '@hookline/core/adapter';
import type { DeadLetter, DeadLetterRef, DeliveryQueue, QueuedDelivery } from '@hookline/core/adapter';
import type { QueueSettings, QueueUnderTest } from '@hookline/testing/conformance';
import { build } from 'esbuild';
import { Miniflare, Response as MiniflareResponse } from 'miniflare';
import { CRASHING_QUEUE, type TestQueueSettings } from './queue-test-queues.test-support';

export const SECRET = 'whsec_cloudflare_queue_test';
/** Conformance queues made up front (miniflare's queues are set when it starts): one per suite test, with room. */
const POOL = 24;

async function bundle(file: string): Promise<string> {
  const result = await build({
    entryPoints: [new URL(file, import.meta.url).pathname],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['@hookline/source'],
    logLevel: 'error',
  });
  return result.outputFiles[0]?.text as string;
}

interface Processor {
  process: (job: QueueJob) => Promise<JobResult>;
  concurrency: number;
  running: Set<Promise<unknown>>;
  closing: boolean;
}

/** A run of an end-to-end handler, as the consumer Worker reports it. */
export interface E2eRun {
  deliveryId: string;
  note: string;
  attempt: number;
  overlap?: boolean;
}

export interface QueueWorkers {
  mf: Miniflare;
  /** Calls cloudflareQueue()'s `method` in the accepting Worker for the queue `settings` names. */
  producer(method: string, settings: TestQueueSettings, body?: Record<string, unknown>): Promise<unknown>;
  /** A conformance queue of its own, as `describeQueueConformance`'s factory returns it. */
  conformanceQueue(settings: QueueSettings): QueueUnderTest;
  /** Settings of the queue whose consumer crashes on every batch, and of its dead-letter queue. */
  readonly crashing: TestQueueSettings;
  /** Handler runs of the end-to-end receiver, in order. */
  readonly e2eRuns: E2eRun[];
  dispose(): Promise<void>;
}

export async function startQueueWorkers(): Promise<QueueWorkers> {
  const [producerScript, consumerScript] = await Promise.all([
    bundle('./queue-producer.test-support.ts'),
    bundle('./queue-consumer-worker.test-support.ts'),
  ]);
  const settingsByQueue = new Map<string, TestQueueSettings>();
  const processors = new Map<string, Processor[]>();
  const e2eRuns: E2eRun[] = [];
  const wake: (() => void)[] = [];
  const wakeAll = () => {
    for (const resume of wake.splice(0)) resume();
  };

  const crashing: TestQueueSettings = {
    binding: 'CRASHING',
    name: CRASHING_QUEUE,
    attempts: 2,
    backoff: { type: 'fixed', delayMs: 0 },
    deadLetterQueue: `${CRASHING_QUEUE}-dlq`,
  };
  settingsByQueue.set(`${CRASHING_QUEUE}-dlq`, crashing);

  /** A job for `queue`: a free slot of one of its processors, or none when no worker consumes it. */
  async function processJob(queue: string, job: QueueJob): Promise<{ result?: JobResult; error?: string; none?: boolean }> {
    for (;;) {
      const open = (processors.get(queue) ?? []).filter((processor) => !processor.closing);
      if (open.length === 0) return { none: true };
      const free = open.find((processor) => processor.running.size < processor.concurrency);
      if (free === undefined) {
        await new Promise<void>((resume) => wake.push(resume));
        continue;
      }
      const running = free.process(job);
      free.running.add(running);
      try {
        return { result: await running };
      } catch (error) {
        return { error: error instanceof Error ? error.message : String(error) };
      } finally {
        free.running.delete(running);
        wakeAll();
      }
    }
  }

  async function fromWorker(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    const body = (await request.json()) as Record<string, unknown>;
    let answer: unknown;
    if (path === '/settings') answer = settingsByQueue.get(body.queue as string) ?? null;
    else if (path === '/process') answer = await processJob(body.queue as string, body.job as QueueJob);
    else if (path === '/e2e-run') {
      e2eRuns.push(body as unknown as E2eRun);
      answer = true;
    } else return new MiniflareResponse('not found', { status: 404 }) as unknown as Response;
    return new MiniflareResponse(JSON.stringify(answer), { headers: { 'content-type': 'application/json' } }) as unknown as Response;
  }

  const pool = Array.from({ length: POOL }, (_, i) => ({ binding: `C${i}`, queue: `conformance-${i}` }));
  const queueBindings = Object.fromEntries([
    ...pool.map(({ binding, queue }) => [binding, queue]),
    ['E2E', 'e2e'],
    ['CRASHING', CRASHING_QUEUE],
  ]);
  // Fast batches for tests (Queues' defaults are 10 messages or 5 s). Queues' own max_retries is above
  // every test queue's attempts - 1, so cloudflareQueue() dead-letters a job's last failure itself.
  const consumer = { maxBatchSize: 10, maxBatchTimeout: 0.05, maxRetries: 10, retryDelay: 0 };
  const mf = new Miniflare({
    compatibilityDate: '2024-09-23',
    workers: [
      {
        name: 'producer',
        modules: true,
        script: producerScript,
        bindings: { WEBHOOK_SECRET: SECRET },
        durableObjects: { HOOKLINE_STORE: { className: 'InspectableStoreObject', useSQLite: true } },
        queueProducers: queueBindings,
      },
      {
        name: 'consumer',
        modules: true,
        script: consumerScript,
        bindings: { WEBHOOK_SECRET: SECRET },
        durableObjects: { HOOKLINE_STORE: { className: 'InspectableStoreObject', scriptName: 'producer', useSQLite: true } },
        queueProducers: queueBindings,
        queueConsumers: {
          ...Object.fromEntries(pool.map(({ queue }) => [queue, consumer])),
          e2e: consumer,
          [CRASHING_QUEUE]: { ...consumer, maxRetries: crashing.attempts - 1, deadLetterQueue: crashing.deadLetterQueue },
          [crashing.deadLetterQueue as string]: consumer,
        },
        serviceBindings: { NODE: fromWorker as never },
      },
    ],
  });
  await mf.ready;

  async function producer(method: string, settings: TestQueueSettings, body: Record<string, unknown> = {}): Promise<unknown> {
    const response = await mf.dispatchFetch(`http://producer.test/queue/${method}`, {
      method: 'POST',
      body: JSON.stringify({ settings, ...body }),
    });
    const answer = (await response.json()) as { result?: unknown; error?: string; code?: string };
    if (answer.error !== undefined) throw Object.assign(new Error(answer.error), answer.code === undefined ? {} : { code: answer.code });
    return answer.result;
  }

  let used = 0;
  function conformanceQueue({ attempts, retryDelayMs }: QueueSettings): QueueUnderTest {
    const slot = pool[used++];
    if (slot === undefined) throw new Error(`only ${POOL} conformance queues were made: raise POOL`);
    const settings: TestQueueSettings = {
      binding: slot.binding,
      name: slot.queue, // its job records: objects of its own
      attempts,
      // Queues delays in whole seconds.
      backoff: { type: 'fixed', delayMs: retryDelayMs },
      shards: 4,
    };
    settingsByQueue.set(slot.queue, settings);
    const queue: DeliveryQueue = {
      name: 'cloudflare-queues',
      enqueue: async (job: QueuedDelivery) => producer('enqueue', settings, { job }) as Promise<{ duplicate: boolean }>,
      work(process, { concurrency }): QueueWorker {
        const processor: Processor = { process, concurrency, running: new Set(), closing: false };
        processors.set(slot.queue, [...(processors.get(slot.queue) ?? []), processor]);
        wakeAll();
        return {
          async close() {
            processor.closing = true;
            wakeAll();
            while (processor.running.size > 0) await Promise.allSettled([...processor.running]);
            processors.set(
              slot.queue,
              (processors.get(slot.queue) ?? []).filter((other) => other !== processor),
            );
          },
        };
      },
      async deadLetters(options = {}) {
        const letters = (await producer('dead-letters', settings, options)) as (Omit<DeadLetter, 'failedAt'> & { failedAt: string })[];
        return letters.map((letter) => ({ ...letter, failedAt: new Date(letter.failedAt) }));
      },
      replay: async (ref: DeadLetterRef) => producer('replay', settings, { ref }) as Promise<boolean>,
      replayAll: async () => producer('replay-all', settings) as Promise<number>,
      close: async () => {},
      bodyLimitBytes: async () => producer('body-limit', settings) as Promise<number | undefined>,
    };
    return {
      queue,
      async addCorruptJob(deliveryId) {
        // A message in the package's envelope whose job is not a queued delivery.
        const body = JSON.stringify({
          hookline: 1,
          deliveryId,
          token: `corrupt-${deliveryId}`,
          sentAt: Date.now(),
          tries: 0,
          job: 'not json',
        });
        await producer('raw', settings, { body });
      },
      cleanup() {
        processors.delete(slot.queue);
      },
    };
  }

  return { mf, producer, conformanceQueue, crashing, e2eRuns, dispose: () => mf.dispose() };
}
