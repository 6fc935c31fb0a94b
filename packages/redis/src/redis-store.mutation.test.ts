// What the Redis store refuses before it reaches Redis, and what it does with a record it cannot read.
import { randomUUID } from 'node:crypto';
import { StoreDataError } from '@hookline/core/adapter';
import { requireServer } from '@hookline/testing';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStore } from './redis-store';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const server = await requireServer('Redis', REDIS_URL);
const prefix = `hookline-test-${randomUUID()}:`;

describe.skipIf(!server.reachable)('redisStore: arguments and unreadable records', () => {
  let client: ReturnType<typeof createClient>;
  beforeAll(async () => {
    client = createClient({ url: REDIS_URL });
    client.on('error', () => {});
    await client.connect();
  });
  afterAll(async () => {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1_000 })) {
      if (keys.length > 0) await client.unlink(keys);
    }
    await client.close();
  });

  it('refuses a lease that is not a positive number of milliseconds, naming leaseMs, on claim and extend', async () => {
    const store = redisStore({ client, prefix });
    for (const leaseMs of [0, -1, Number.NaN, '1000' as unknown as number]) {
      await expect(store.claim('hookline:wdl_a', 't', leaseMs)).rejects.toThrow(/^redisStore: leaseMs must be a positive number/);
      await expect(store.extend('hookline:wdl_a', 't', leaseMs)).rejects.toThrow(/^redisStore: leaseMs must be a positive number/);
    }
  });

  it('refuses a prefix that is not a string', () => {
    expect(() => redisStore({ client, prefix: 5 as unknown as string })).toThrow(RangeError);
  });

  it('refuses versions that are not finite numbers and retentions that are not positive, before writing anything', async () => {
    const store = redisStore({ client, prefix });
    const advance = store.advanceVersion as (key: string, version: number, retentionMs: number) => Promise<boolean>;
    for (const version of [Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number]) {
      await expect(advance('hookline:order:h:r:version', version, 60_000)).rejects.toThrow(
        /^redisStore: a version must be a finite number/,
      );
    }
    for (const retentionMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, '60000' as unknown as number]) {
      await expect(advance('hookline:order:h:r:version', 1, retentionMs)).rejects.toThrow(
        /^redisStore: retentionMs must be a positive number of milliseconds/,
      );
    }
    expect(await (store.readVersion as (key: string) => Promise<number | undefined>)('hookline:order:h:r:version')).toBeUndefined();
    expect(await advance('hookline:order:h:r:version', 0.5, 0.5)).toBe(true);
  });

  it('refuses version keys holding a lone surrogate with StoreDataError', async () => {
    const store = redisStore({ client, prefix });
    const read = store.readVersion as (key: string) => Promise<number | undefined>;
    await expect(read('hookline:order:h:\ud800:version')).rejects.toBeInstanceOf(StoreDataError);
    await expect(read('hookline:order:h:\ud800:version')).rejects.toThrow(/is not well-formed Unicode/);
  });

  it('rejects, naming the key, when a version record holds something that is not a number', async () => {
    const store = redisStore({ client, prefix });
    await client.set(`${prefix}{v:hookline:order:h:bad:version}`, 'not-a-number', { PX: 60_000 });
    await expect((store.readVersion as (key: string) => Promise<number | undefined>)('hookline:order:h:bad:version')).rejects.toThrow(
      'redisStore: the version record of "hookline:order:h:bad:version" holds "not-a-number"',
    );
  });
});
