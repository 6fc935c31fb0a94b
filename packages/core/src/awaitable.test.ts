import { describe, expect, it, vi } from 'vitest';
import { isPromiseLike } from './awaitable';
import { runStep } from './step';

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

describe('runStep', () => {
  const state = { name: 'state' };
  const attempt = { name: 'attempt' };
  const seen = (label: string) => (s: typeof state, a: typeof attempt, value: unknown) => `${label}:${s.name}:${a.name}:${String(value)}`;

  it('hands a plain value on in the same turn, with the step arguments', () => {
    expect(runStep(state, attempt, { call: () => 1, answered: seen('value'), failed: seen('error') })).toBe('value:state:attempt:1');
  });

  it('hands a promised value on when it settles', async () => {
    const result = runStep(state, attempt, { call: async () => 2, answered: seen('value'), failed: seen('error') });
    expect(isPromiseLike(result)).toBe(true);
    await expect(result).resolves.toBe('value:state:attempt:2');
  });

  it("hands the call's synchronous throw and its rejection to failed", async () => {
    const boom = () => {
      throw 'thrown';
    };
    expect(runStep(state, attempt, { call: boom, answered: seen('value'), failed: seen('error') })).toBe('error:state:attempt:thrown');
    await expect(
      runStep(state, attempt, { call: () => Promise.reject('rejected'), answered: seen('value'), failed: seen('error') }),
    ).resolves.toBe('error:state:attempt:rejected');
  });

  it("never sends answered's throw to failed, in either path", async () => {
    const onError = vi.fn(seen('error'));
    const fails = () => {
      throw new Error('a bug in the step');
    };
    expect(() => runStep(state, attempt, { call: () => 1, answered: fails, failed: onError })).toThrow('a bug in the step');
    await expect(runStep(state, attempt, { call: async () => 1, answered: fails, failed: onError })).rejects.toThrow('a bug in the step');
    expect(onError).not.toHaveBeenCalled();
  });

  it('without failed, lets a throw out and leaves a rejection rejected', async () => {
    expect(() =>
      runStep(state, attempt, {
        call: () => {
          throw new Error('out');
        },
        answered: seen('value'),
      }),
    ).toThrow('out');
    await expect(runStep(state, attempt, { call: () => Promise.reject(new Error('late')), answered: seen('value') })).rejects.toThrow(
      'late',
    );
  });
});
