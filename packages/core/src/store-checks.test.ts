import { describe, expect, it } from 'vitest';
import { StoreDataError } from './store';
import { DEFAULT_RETENTION_MS, isWellFormed, positiveMs, refuseRenamedOptions, wellFormedKey } from './store-checks';

describe('the checks stores share', () => {
  it('refuseRenamedOptions names the new option for an old one given, and passes the rest', () => {
    expect(() => refuseRenamedOptions('postgresStore', { pool: {} }, { pool: 'client' })).toThrow(
      new TypeError('postgresStore: `pool` is now `client`'),
    );
    expect(() => refuseRenamedOptions('postgresStore', { client: {}, pool: undefined }, { pool: 'client' })).toThrow(TypeError);
    expect(() => refuseRenamedOptions('postgresStore', { client: {} }, { pool: 'client' })).not.toThrow();
  });

  it('refuseRenamedOptions finds an old name inside the options and says what changed with the new one', () => {
    const renames = {
      maxRetries: { to: 'attempts', note: 'which counts every try, the first included (attempts = maxRetries + 1)' },
      'worker.maxStalledCount': 'maxStalls',
    };
    expect(() => refuseRenamedOptions('someQueue', { maxRetries: 3 }, renames)).toThrow(
      new TypeError('someQueue: `maxRetries` is now `attempts`, which counts every try, the first included (attempts = maxRetries + 1)'),
    );
    expect(() => refuseRenamedOptions('someQueue', { worker: { maxStalledCount: 1 } }, renames)).toThrow(
      new TypeError('someQueue: `worker.maxStalledCount` is now `maxStalls`'),
    );
    for (const worker of [undefined, null, 5, { lockDuration: 1 }]) {
      expect(() => refuseRenamedOptions('someQueue', { worker }, renames)).not.toThrow();
    }
  });

  it('positiveMs passes a positive finite duration through and names the owner and option otherwise', () => {
    expect(positiveMs('redisStore', 'keepMs', 1.5)).toBe(1.5);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number]) {
      expect(() => positiveMs('redisStore', 'keepMs', bad)).toThrow(
        new RangeError(`redisStore: keepMs must be a positive number of milliseconds, got ${bad}`),
      );
    }
  });

  it('isWellFormed finds a lone surrogate at either end or alone, with or without the native check', () => {
    const texts = { 'wdl_a\ud83d\ude00': true, 'wdl_a\ud800': false, '\udfffwdl_a': false, 'a\udc00\ud800b': false, '': true };
    const check = () => Object.entries(texts).map(([text]) => isWellFormed(text));
    const withNative = check();
    // A runtime older than ES2024, without String.prototype.isWellFormed: the expression decides.
    const prototype = String.prototype as { isWellFormed?: unknown };
    const native = Object.getOwnPropertyDescriptor(prototype, 'isWellFormed');
    delete prototype.isWellFormed;
    let withoutNative: boolean[];
    try {
      withoutNative = check();
    } finally {
      if (native !== undefined) Object.defineProperty(prototype, 'isWellFormed', native);
    }
    expect(withNative).toEqual(Object.values(texts));
    expect(withoutNative).toEqual(Object.values(texts));
  });

  it('wellFormedKey returns a key UTF-8 keeps as itself and refuses any other with a StoreDataError naming it', () => {
    expect(wellFormedKey('postgresStore', 'hookline:wdl_1')).toBe('hookline:wdl_1');
    const refused = (() => {
      try {
        wellFormedKey('mysqlStore', 'tok\ud800', 'token');
      } catch (error) {
        return error;
      }
    })();
    expect(StoreDataError.is(refused)).toBe(true);
    expect((refused as Error).message).toBe(
      'mysqlStore: the token "tok\\ud800" is not well-formed Unicode (a lone surrogate); it would be stored lossily',
    );
    expect(() => wellFormedKey('sqliteStore', 42 as unknown as string)).toThrow(StoreDataError);
  });

  it('keeps records 72 hours by default', () => {
    expect(DEFAULT_RETENTION_MS).toBe(72 * 60 * 60 * 1000);
  });
});
