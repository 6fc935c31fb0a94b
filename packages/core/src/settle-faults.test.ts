// Settling a delivery against a store that fails: the answer stays what the handlers earned, and the
// store's error reaches onError as a store error (phase 'store') naming the delivery, whether the
// store throws synchronously or rejects.
import { describe, expect, it } from 'vitest';
import type { ErrorInfo } from './hooks';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import type { IdempotencyStore } from './store';
import { envelope, signed, SECRET } from './test-support';

type Failure = 'throws' | 'rejects';

/** A memory store whose complete() and release() fail, by throwing at once or by rejecting. */
function failingSettle(how: Failure): IdempotencyStore {
  const inner = memoryStore();
  const fail = (operation: string) => {
    const error = new Error(`${operation} failed`);
    if (how === 'throws') throw error;
    return Promise.reject(error);
  };
  return { claim: inner.claim, extend: inner.extend, complete: () => fail('complete'), release: () => fail('release') };
}

function receiverOn(store: IdempotencyStore) {
  const reports: [message: string, phase: ErrorInfo['phase'], deliveryId: string | undefined][] = [];
  const receiver = createReceiver({ secret: SECRET, store }).onError((error, info) => {
    reports.push([(error as Error).message, info.phase, info.delivery?.deliveryId]);
  });
  return { receiver, reports };
}

describe.each<Failure>(['throws', 'rejects'])('a store whose complete() and release() %s', (how) => {
  it("answers the handlers' 200 and reports the failed completion as a store error", async () => {
    const { receiver, reports } = receiverOn(failingSettle(how));
    receiver.on('*', () => {});
    const body = envelope();
    expect((await receiver.handle(signed(body))).status).toBe(200);
    expect(reports).toEqual([['complete failed', 'store', body.deliveryId]]);
  });

  it("answers the handler's failure (500) and reports the failed release as a store error beside it", async () => {
    const { receiver, reports } = receiverOn(failingSettle(how));
    receiver.on('*', () => {
      throw new Error('handler failed');
    });
    const body = envelope();
    expect((await receiver.handle(signed(body))).status).toBe(500);
    expect(reports).toEqual([
      ['release failed', 'store', body.deliveryId],
      ['handler failed', 'handler', body.deliveryId],
    ]);
  });
});
