import { describe, expect, it } from 'vitest';
import { isPromiseLike, mapAwaitable } from './awaitable';

describe('isPromiseLike', () => {
  it('tells a thenable from a plain value', () => {
    expect(isPromiseLike(Promise.resolve(1))).toBe(true);
    // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a Promise is what this checks
    const thenable = { then: () => undefined } as unknown as Promise<number>;
    expect(isPromiseLike(thenable)).toBe(true);
    expect(isPromiseLike(1)).toBe(false);
    expect(isPromiseLike(null as unknown as number)).toBe(false);
    // biome-ignore lint/suspicious/noThenProperty: an object whose then is no function is not a promise
    const notThenable = { then: 1 } as unknown as number;
    expect(isPromiseLike(notThenable)).toBe(false);
  });
});

describe('mapAwaitable', () => {
  it('maps a plain value in the same turn, without a promise', () => {
    const result = mapAwaitable(2, (value) => value * 10);
    expect(result).toBe(20);
  });

  it('maps a promise when it settles, and returns a promise', async () => {
    const result = mapAwaitable(Promise.resolve(2), (value) => value * 10);
    expect(isPromiseLike(result)).toBe(true);
    await expect(result).resolves.toBe(20);
  });

  it('lets a synchronous throw out when no onError is given', () => {
    expect(() =>
      mapAwaitable(1, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
  });

  it('hands a synchronous throw to onError, synchronously', () => {
    const result = mapAwaitable(
      1,
      (): string => {
        throw new Error('boom');
      },
      (error) => `caught ${(error as Error).message}`,
    );
    expect(result).toBe('caught boom');
  });

  it('hands a rejection to onError', async () => {
    const result = mapAwaitable(
      Promise.reject(new Error('late')),
      (value: number) => `got ${value}`,
      (error) => `caught ${(error as Error).message}`,
    );
    await expect(result).resolves.toBe('caught late');
  });

  it('leaves a rejection rejected when no onError is given', async () => {
    const result = mapAwaitable(Promise.reject(new Error('late')), (value: number) => value);
    await expect(result).rejects.toThrow('late');
  });

  it('does not send a throw of onError back into onError', () => {
    let calls = 0;
    expect(() =>
      mapAwaitable(
        1,
        () => {
          throw new Error('first');
        },
        () => {
          calls += 1;
          throw new Error('second');
        },
      ),
    ).toThrow('second');
    expect(calls).toBe(1);
  });
});
