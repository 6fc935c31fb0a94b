// The Lambda worker at the edges of an invocation, driven the way Lambda drives it: batches larger
// than the function's concurrency, an invocation that runs out of time or is killed (Lambda then deletes
// none of its batch), and an execution environment frozen with a handler still running and thawed later.
import { LeaseLostError, PermanentFailure } from '@hookline/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSqsServer, startSqsServer } from '../support/sqs-server/start';
import { type DeploymentOptions, deployment as deploy, functionUrlEvent, newId } from './support/deployment';
import type { TestQueues } from './support/sqs-queues';

let server: RunningSqsServer;
const opened: TestQueues[] = [];
beforeAll(async () => {
  server = await startSqsServer();
});
afterEach(async () => {
  for (const queues of opened.splice(0)) await queues.remove();
});
afterAll(async () => {
  await server?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const deployment = (options: DeploymentOptions = {}) => deploy(server, opened, options);

describe('sqsHandler and the invocation’s time', () => {
  it('starts no record after the hand-back and hands back each one not finished: 4 records at concurrency 2 return in time', async () => {
    const { web, worker, receiver, queue } = await deployment({ leaseMs: 1_000, maxRunMs: 20_000, handler: { concurrency: 2 } });
    const started: string[] = [];
    const finished: string[] = [];
    receiver.on('message.delivered', async ({ deliveryId }) => {
      started.push(deliveryId);
      await sleep(3_500);
      finished.push(deliveryId);
    });
    const ids = [newId(), newId(), newId(), newId()];
    for (const id of ids) expect((await web(functionUrlEvent(id))).statusCode).toBe(202);
    // 4,000 ms left and 3,000 kept back: the hand-back comes at 1,000 ms, with two records running.
    const first = await worker.invoke({ remainingMs: 4_000, batchingWindowMs: 300 });
    expect(first.records).toHaveLength(4);
    expect(first.ended).toBe('returned');
    expect(first.leftMs).toBeGreaterThan(0);
    expect(first.response).toEqual({ batchItemFailures: [] });
    expect(started).toHaveLength(2);
    // Every job runs to success once: the two not started at once, the two handed back after their lease.
    for (let i = 0; i < 10 && finished.length < 4; i++) await worker.invoke(2);
    expect(new Set(finished)).toEqual(new Set(ids));
    expect(started).toHaveLength(4);
    expect(await queue.deadLetters()).toEqual([]);
  }, 60_000);

  it('never forks a record an invocation settled before it was killed: a failing record with attempts 2 runs twice', async () => {
    const { web, worker, receiver, queue } = await deployment({ attempts: 2, retryMs: 1_000, visibilityTimeout: 2 });
    const failing = newId();
    const runs: string[] = [];
    receiver.on('message.delivered', async ({ deliveryId }) => {
      runs.push(deliveryId);
      if (deliveryId === failing) throw new Error('downstream down');
      await sleep(3_000); // the other record of the batch outlives the invocation
    });
    await web(functionUrlEvent(failing));
    await web(functionUrlEvent(newId()));
    // The runtime dies at 1 s (out of memory): the failing record's retry was sent, nothing is deleted.
    const killed = await worker.invoke({ killAfterMs: 1_000 });
    expect(killed.ended).toBe('killed');
    expect(killed.records).toHaveLength(2);
    for (let i = 0; i < 12 && (await queue.deadLetters()).length === 0; i++) await worker.invoke(2);
    for (let i = 0; i < 3; i++) await worker.invoke(1); // whatever else comes back
    expect(runs.filter((id) => id === failing)).toHaveLength(2);
    const letters = await queue.deadLetters();
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ deliveryId: failing, attempts: 2, lastError: 'Error: downstream down' });
  }, 60_000);

  it('a function that throws leaves its whole batch, which runs again once', async () => {
    const { web, worker, receiver } = await deployment({ visibilityTimeout: 1 });
    let runs = 0;
    receiver.on('message.delivered', () => {
      runs += 1;
      if (runs === 1) throw new PermanentFailure('never');
    });
    await web(functionUrlEvent(newId()));
    const thrown = await worker.invoke({ throwAfterHandler: true });
    expect(thrown.ended).toBe('threw');
    // Its record was settled (dead-lettered) before the function failed: it comes back and is deleted unrun.
    for (let i = 0; i < 3; i++) await worker.invoke(2);
    expect(runs).toBe(1);
  }, 30_000);
});

describe('a frozen execution environment', () => {
  it('notices a thaw that outlasted the lease of a handler handed back, and says so', async () => {
    const { web, worker, receiver, errors } = await deployment({ leaseMs: 600, maxRunMs: 20_000, handler: { handBackMarginMs: 500 } });
    let release!: () => void;
    receiver.on('message.delivered', () => new Promise<void>((resolve) => (release = resolve)));
    const deliveryId = newId();
    await web(functionUrlEvent(deliveryId));
    // 1,500 ms left, 500 kept back: the running handler is handed back at 750 ms, and runs on.
    expect((await worker.invoke({ remainingMs: 1_500 })).ended).toBe('returned');
    // Lambda freezes the environment: no timer runs, no lease is renewed. Here: the thread blocked for 1.5 s.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1_500);
    await sleep(1_100);
    release();
    expect(errors.map((error) => error.message)).toContainEqual(
      expect.stringMatching(
        new RegExp(`frozen for about \\d+ ms, longer than the receiver's leaseMs \\(600 ms\\), while the handlers of ${deliveryId} ran on`),
      ),
    );
  }, 30_000);

  it('aborts the signal of a handler handed back when a thaw outlasted its lease: it stops before it writes, and its copy runs once', async () => {
    const { web, worker, receiver } = await deployment({ leaseMs: 600, maxRunMs: 20_000, handler: { handBackMarginMs: 500 } });
    let resume!: () => void;
    let firstSignal: AbortSignal | undefined;
    const writes: number[] = [];
    receiver.on('message.delivered', async (_delivery, { signal, fencingToken }) => {
      if (firstSignal === undefined) {
        firstSignal = signal;
        await new Promise<void>((resolve) => (resume = resolve));
      }
      signal.throwIfAborted();
      writes.push(fencingToken);
    });
    await web(functionUrlEvent(newId()));
    expect((await worker.invoke({ remainingMs: 1_500 })).ended).toBe('returned');
    expect(firstSignal?.aborted).toBe(false);
    // Frozen for 1.5 s, longer than the 600 ms lease; nothing else claimed the delivery meanwhile, so the
    // store still extends the lapsed lease: only the thaw can tell the handler it must stop.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1_500);
    await sleep(200);
    expect(firstSignal?.aborted).toBe(true);
    expect(LeaseLostError.is(firstSignal?.reason)).toBe(true);
    expect(String((firstSignal?.reason as Error | undefined)?.message)).toMatch(
      /may have lapsed while its handlers ran \(sqsHandler: this execution environment was frozen/,
    );
    resume();
    // The resumed handler wrote nothing; its copy (handed back as a wait of one lease) runs and writes once.
    for (let i = 0; i < 10 && writes.length === 0; i++) await worker.invoke(1);
    expect(writes).toEqual([2]);
  }, 30_000);
});
