import { describe, expect, it, vi } from 'vitest';
import { isPromiseLike, mapAwaitable, thenStep } from './awaitable';

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

describe('thenStep', () => {
  const state = { name: 'state' };
  const attempt = { name: 'attempt' };
  const seen = (label: string) => (s: typeof state, a: typeof attempt, value: unknown) => `${label}:${s.name}:${a.name}:${String(value)}`;

  it('hands a plain value on in the same turn, with the step arguments', () => {
    expect(thenStep(state, attempt, () => 1, seen('value'), seen('error'))).toBe('value:state:attempt:1');
  });

  it('hands a promised value on when it settles', async () => {
    const result = thenStep(state, attempt, async () => 2, seen('value'), seen('error'));
    expect(isPromiseLike(result)).toBe(true);
    await expect(result).resolves.toBe('value:state:attempt:2');
  });

  it("hands the call's synchronous throw and its rejection to onError", async () => {
    const boom = () => {
      throw 'thrown';
    };
    expect(thenStep(state, attempt, boom, seen('value'), seen('error'))).toBe('error:state:attempt:thrown');
    await expect(thenStep(state, attempt, () => Promise.reject('rejected'), seen('value'), seen('error'))).resolves.toBe(
      'error:state:attempt:rejected',
    );
  });

  it("never sends onValue's throw to onError, in either path", async () => {
    const onError = vi.fn(seen('error'));
    const fails = () => {
      throw new Error('a bug in the step');
    };
    expect(() => thenStep(state, attempt, () => 1, fails, onError)).toThrow('a bug in the step');
    await expect(thenStep(state, attempt, async () => 1, fails, onError)).rejects.toThrow('a bug in the step');
    expect(onError).not.toHaveBeenCalled();
  });

  it('without onError, lets a throw out and leaves a rejection rejected', async () => {
    expect(() =>
      thenStep(
        state,
        attempt,
        () => {
          throw new Error('out');
        },
        seen('value'),
      ),
    ).toThrow('out');
    await expect(thenStep(state, attempt, () => Promise.reject(new Error('late')), seen('value'))).rejects.toThrow('late');
  });
});
