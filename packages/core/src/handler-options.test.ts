// receiver.on()'s options, refused at registration with a configuration error that names the fix,
// and the plain path kept for a handler that asks for no guard.
import { describe, expect, it } from 'vitest';
import { memoryStore } from './memory-store';
import { createReceiver } from './receiver';
import type { IdempotencyStore } from './store';
import { envelope, SECRET, signed } from './test-support';

/** The error receiver.on() throws for these options, or `undefined`. */
function misuse(options: unknown, store?: IdempotencyStore): { code?: string; message: string } | undefined {
  try {
    createReceiver({ secret: SECRET, ...(store ? { store } : {}) }).on('*', () => {}, options as never);
    return undefined;
  } catch (error) {
    return error as { code?: string; message: string };
  }
}

describe('receiver.on() options', () => {
  it.each<[unknown, string]>([
    ['', 'empty'],
    ['a b', 'with a space'],
    ['x'.repeat(101), 'too long'],
    [7, 'a number'],
  ])('refuses the name %j (%s), naming it', (name) => {
    expect(misuse({ name })).toEqual(
      expect.objectContaining({
        code: 'CONFIGURATION_ERROR',
        message: `receiver.on(): name "${String(name)}" must be 1–100 letters, digits or _ . : - (it becomes part of a store key).`,
      }),
    );
  });

  it('accepts a name of 100 characters from the whole alphabet', () => {
    expect(misuse({ name: `aZ09_.:-${'x'.repeat(92)}` })).toBeUndefined();
  });

  it('refuses an order guard that is not an object with a key function', () => {
    for (const order of [() => 'key', { key: 'lineId' }, 'lineId']) {
      expect(misuse({ name: 'guarded', order })).toEqual(
        expect.objectContaining({ code: 'CONFIGURATION_ERROR', message: 'receiver.on(): order.key must be a function of the delivery.' }),
      );
    }
  });

  it('refuses an order guard on a store that lacks either version method', () => {
    const inner = memoryStore();
    const order = { key: () => 'k' };
    const base = { claim: inner.claim, complete: inner.complete, release: inner.release, extend: inner.extend };
    const readOnly: IdempotencyStore = { ...base, readVersion: inner.readVersion };
    const writeOnly: IdempotencyStore = { ...base, advanceVersion: inner.advanceVersion };
    for (const store of [readOnly, writeOnly]) {
      expect(misuse({ name: 'guarded', order }, store)?.message).toMatch(/^receiver\.on\(\): order needs a store with version records/);
    }
    expect(misuse({ name: 'guarded', order }, memoryStore())).toBeUndefined();
  });

  it("refuses an onInvalid other than 'retry' or 'permanent', naming it", () => {
    const schema = { '~standard': { version: 1, vendor: 'test', validate: (value: unknown) => ({ value }) } };
    expect(misuse({ name: 'checked', schema, onInvalid: 'skip' })).toEqual(
      expect.objectContaining({
        code: 'CONFIGURATION_ERROR',
        message: "receiver.on(): onInvalid must be 'retry' or 'permanent', got skip.",
      }),
    );
    expect(misuse({ name: 'checked', schema, onInvalid: 'permanent' })).toBeUndefined();
  });

  it('refuses a transactional handler without a name, whatever the store', () => {
    const withTransactions = Object.assign(memoryStore(), { transaction: async () => ({ completed: true }) });
    expect(misuse({ transactional: true }, withTransactions)).toEqual(
      expect.objectContaining({ code: 'CONFIGURATION_ERROR', message: expect.stringMatching(/transactional handler needs a name/) }),
    );
    expect(misuse({ name: 'save-order', transactional: true }, withTransactions)).toBeUndefined();
  });

  it('accepts transactional: false on a store without transactions', () => {
    expect(misuse({ name: 'plain', transactional: false })).toBeUndefined();
    expect(misuse({ name: 'plain', transactional: true })?.message).toMatch(/^receiver\.on\(\): transactional: true needs a store/);
  });

  it('runs a named handler with no guard on the plain path: its throw fails the delivery and stops the handlers after it', async () => {
    const ran: string[] = [];
    const receiver = createReceiver({ secret: SECRET })
      .onError(() => {})
      .on(
        '*',
        () => {
          ran.push('first');
          throw new Error('first failed');
        },
        { name: 'first' },
      )
      .on('*', () => {
        ran.push('second');
      });
    expect((await receiver.handle(signed(envelope()))).status).toBe(500);
    expect(ran).toEqual(['first']);
  });
});
