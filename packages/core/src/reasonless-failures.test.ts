// A handler that throws or rejects with no reason (`throw undefined`, `Promise.reject()`) fails like
// any other: 500, the record released so the retry runs it again, and onError told what happened.
import { describe, expect, it } from 'vitest';
import { createReceiver } from './receiver';
import { envelope, json, signed, SECRET } from './test-support';

describe.each([
  [
    'throws',
    () => {
      throw undefined;
    },
    'a handler threw no reason',
  ],
  ['rejects', () => Promise.reject(undefined), 'a handler rejected with no reason'],
] as const)('a handler that %s with no reason', (_, handler, message) => {
  it('is answered 500, retried, and reported with an error saying it gave no reason', async () => {
    const reports: [string, string][] = [];
    const receiver = createReceiver({ secret: SECRET }).onError((error, info) => {
      reports.push([(error as Error).message, info.phase]);
    });
    let runs = 0;
    receiver.on('*', () => {
      runs++;
      return handler();
    });
    const input = signed(envelope());
    const answer = await receiver.handle(input);
    expect(answer.status).toBe(500);
    expect(json(answer).error?.code).toBe('INTERNAL_ERROR');
    expect(reports).toEqual([[message, 'handler']]);
    expect((await receiver.handle(input)).status).toBe(500);
    expect(runs).toBe(2);
  });
});
