// A handler's PermanentFailure is answered 200 (a worker dead-letters its job), and without a word it
// looks like success. By default it is written like the refusals: the first of each kind (event and
// message) on console.warn with what it means and what to do, the repeats counted once a minute; a
// logger hears each one at warn level; `logger: false` silences it. Fake timers stand in for the minute.
import { describe, expect, it, vi } from 'vitest';
import { PermanentFailure } from './errors';
import { NOTE_SUMMARY_MS } from './notes';
import type { DeliveryQueue, QueuedDelivery } from './queue';
import { createReceiver } from './receiver';
import { queueJobEntry } from './receiver-entry';
import { consoleNotes, envelope, json, SECRET, signed } from './test-support';

const { spied, warnings: lines } = consoleNotes();

function givingUp(options: Parameters<typeof createReceiver>[0] = { secret: SECRET }) {
  const receiver = createReceiver(options);
  receiver.on('message.failed', ({ data }) => {
    throw new PermanentFailure(`unknown message${(data as { variant?: string }).variant ?? ''}`);
  });
  return receiver;
}

describe('a PermanentFailure, synchronous mode', () => {
  it('is written on console.warn the first time, with what it means and what to do; the repeats are counted once a minute', async () => {
    const receiver = givingUp();
    const first = envelope({ event: 'message.failed' });
    expect(json(await receiver.handle(signed(first)))).toEqual({ ok: true, failed: true });
    for (let i = 0; i < 3; i++) await receiver.handle(signed(envelope({ event: 'message.failed' })));
    expect(lines()).toEqual([
      `[hookline] a handler gave up on message.failed ${first.deliveryId} with PermanentFailure: unknown message. It was answered 200, so the service will not retry it. If it should have succeeded, the check that threw is wrong (a look-up in the wrong database, a schema that no longer fits the payload): fix it, then replay the delivery. (Further permanent failures of this kind are counted once a minute; pass a \`logger\` to see each one, or \`logger: false\` for none.)`,
    ]);
    vi.advanceTimersByTime(NOTE_SUMMARY_MS);
    expect(lines()[1]).toBe(
      '[hookline] in the last minute, handlers gave up on 3 more deliveries with PermanentFailure: 3 × message.failed (unknown message)',
    );
    expect(spied.error).not.toHaveBeenCalled();
  });

  it('writes each kind once: another message is another kind', async () => {
    const receiver = givingUp();
    await receiver.handle(signed(envelope({ event: 'message.failed' })));
    await receiver.handle(signed(envelope({ event: 'message.failed', data: { variant: ' (deleted)' } })));
    await receiver.handle(signed(envelope({ event: 'message.failed' })));
    expect(lines().map((line) => line.replace(/wdl_\w+/, 'wdl_…').split('. It was')[0])).toEqual([
      '[hookline] a handler gave up on message.failed wdl_… with PermanentFailure: unknown message',
      '[hookline] a handler gave up on message.failed wdl_… with PermanentFailure: unknown message (deleted)',
    ]);
  });

  it('a schema mismatch with onInvalid: permanent is one too', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const schema = {
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: () => ({ issues: [{ message: 'expected a number', path: ['messageId'] }] }),
      },
    };
    receiver.on('message.delivered', () => {}, { name: 'checked', schema, onInvalid: 'permanent' });
    expect(json(await receiver.handle(signed(envelope())))).toEqual({ ok: true, failed: true });
    expect(lines()[0]).toContain(
      "with PermanentFailure: the message.delivered payload does not match checked's schema: data.messageId: expected a number.",
    );
  });

  it('goes to the logger at warn level, each one, and nothing to the console', async () => {
    const logged: [object, string | undefined][] = [];
    const receiver = givingUp({
      secret: SECRET,
      logger: { warn: (fields, message) => void logged.push([fields, message]), error: () => {} },
    });
    const body = envelope({ event: 'message.failed' });
    await receiver.handle(signed(body));
    await receiver.handle(signed(envelope({ event: 'message.failed' })));
    expect(logged).toHaveLength(2);
    expect(logged[0]).toEqual([
      { err: expect.any(PermanentFailure), permanent: true, event: 'message.failed', deliveryId: body.deliveryId },
      `hookline: a handler gave up on message.failed ${body.deliveryId} with PermanentFailure: unknown message. It was answered 200, so the service will not retry it.`,
    ]);
    expect(lines()).toEqual([]);
  });

  it('writes nothing with logger: false', async () => {
    const receiver = givingUp({ secret: SECRET, logger: false });
    expect(json(await receiver.handle(signed(envelope({ event: 'message.failed' }))))).toEqual({ ok: true, failed: true });
    vi.advanceTimersByTime(NOTE_SUMMARY_MS);
    expect(lines()).toEqual([]);
    expect(spied.error).not.toHaveBeenCalled();
  });
});

describe('a PermanentFailure, answer-fast mode (the worker)', () => {
  const queue: DeliveryQueue = {
    name: 'test',
    enqueue: async () => ({ duplicate: false }),
    work: () => ({ close: async () => {} }),
    deadLetters: async () => [],
    replay: async () => false,
    replayAll: async () => 0,
    close: async () => {},
  };
  const job = (delivery: Record<string, unknown>) => ({
    payload: { delivery, receivedAt: Date.now(), secretIndex: 0 } as unknown as QueuedDelivery,
    attempt: 1,
    maxAttempts: 7,
  });

  it('dead-letters the job and writes it on console.warn, saying so', async () => {
    const receiver = givingUp({ secret: SECRET, queue });
    const body = envelope({ event: 'message.failed' });
    expect(await queueJobEntry(receiver)?.process(job(body))).toEqual({
      status: 'dead',
      reason: 'PermanentFailure: unknown message',
      kind: 'permanent',
    });
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toContain(
      `a handler gave up on message.failed ${body.deliveryId} with PermanentFailure: unknown message. Its job was dead-lettered, not retried`,
    );
  });

  it('writes nothing with logger: false', async () => {
    const receiver = givingUp({ secret: SECRET, queue, logger: false });
    expect((await queueJobEntry(receiver)?.process(job(envelope({ event: 'message.failed' }))))?.status).toBe('dead');
    expect(lines()).toEqual([]);
  });
});
