// The error classes a handler or a store throws and the receiver recognises, from any copy of the
// package: what `is()` accepts, and what each error shows (name, cause, JSON).
import { describe, expect, it } from 'vitest';
import { HooklineError, PermanentFailure } from './errors';
import { StoreDataError } from './store';

const notErrors: unknown[] = [undefined, null, 0, 'HooklineError', () => {}, {}, new Error('plain')];

describe.each([
  ['HooklineError', HooklineError, () => new HooklineError('CONFLICT', 'busy'), 'hookline.error'],
  ['PermanentFailure', PermanentFailure, () => new PermanentFailure('never'), 'hookline.permanent-failure'],
  ['StoreDataError', StoreDataError, () => new StoreDataError('bad key'), 'hookline.store-data-error'],
] as const)('%s', (name, Class, make, brand) => {
  it('is() is true for its instances and false for anything else, never throwing', () => {
    expect(Class.is(make())).toBe(true);
    for (const value of notErrors) expect(Class.is(value)).toBe(false);
  });

  it('is() is true for an instance from another copy of the package (the brand is a registered symbol)', () => {
    const symbols = Object.getOwnPropertySymbols(make());
    expect(symbols.map((symbol) => Symbol.keyFor(symbol))).toContain(brand);
    expect(Class.is({ [Symbol.for(brand)]: true })).toBe(true);
  });

  it('is named after its class', () => {
    expect(make().name).toBe(name);
    expect(String(make())).toMatch(new RegExp(`^${name}: `));
  });
});

describe('HooklineError', () => {
  it('keeps the cause it was given, and has none otherwise', () => {
    const cause = new Error('socket closed');
    expect(new HooklineError('SERVICE_UNAVAILABLE', 'store down', { cause }).cause).toBe(cause);
    expect('cause' in new HooklineError('SERVICE_UNAVAILABLE', 'store down')).toBe(false);
  });

  it('shows details in its JSON only when it has some', () => {
    expect(new HooklineError('CONFLICT', 'busy').toJSON()).toEqual({ error: { code: 'CONFLICT', message: 'busy' } });
    expect('details' in new HooklineError('CONFLICT', 'busy').toJSON().error).toBe(false);
    const details = { reason: 'in_progress' };
    expect(new HooklineError('CONFLICT', 'busy', { details }).toJSON()).toEqual({ error: { code: 'CONFLICT', message: 'busy', details } });
  });
});
