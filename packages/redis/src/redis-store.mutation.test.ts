// What the Redis store refuses before it reaches Redis, what it does with a record it cannot read, and
// which server errors make it send a script again.
import { randomUUID } from 'node:crypto';
import { StoreDataError } from '@hookline/core/adapter';
import { requireServer } from '@hookline/testing';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IoredisLike, NodeRedisLike } from './redis-client';
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

  describe('an error other than NOSCRIPT', () => {
    // Re-sending the script as EVAL is for a server that does not know it. Any other error (a wrong
    // type, a timeout after which the script may have run) goes back to the caller as the server
    // answered it, without a second command.
    const io = new Redis(REDIS_URL, { lazyConnect: true });
    afterAll(() => io.quit());

    /** The key's record is a hash, not a string: the script's GET fails with WRONGTYPE. */
    async function wrongTypeKey(): Promise<string> {
      const id = `wdl_${randomUUID()}`;
      await client.hSet(`${prefix}ns:{${id}}`, 'field', 'value');
      return `ns:${id}`;
    }

    it('rejects with the server error and sends no EVAL, with node-redis', async () => {
      let evals = 0;
      const counted: NodeRedisLike = {
        evalSha: (sha1, options) => client.evalSha(sha1, options),
        eval: (script, options) => {
          evals++;
          return client.eval(script, options);
        },
      };
      const store = redisStore({ client: counted, prefix });
      await expect(store.claim(await wrongTypeKey(), 't', 60_000)).rejects.toThrow(/WRONGTYPE/);
      expect(evals).toBe(0);
    });

    it('rejects with the server error and sends no EVAL, with ioredis', async () => {
      await io.connect();
      let evals = 0;
      const counted: IoredisLike = {
        evalsha: (sha1, numkeys, ...args) => io.evalsha(sha1, numkeys, ...args),
        eval: (script, numkeys, ...args) => {
          evals++;
          return io.eval(script, numkeys, ...args);
        },
      };
      const store = redisStore({ client: counted, prefix });
      await expect(store.claim(await wrongTypeKey(), 't', 60_000)).rejects.toThrow(/WRONGTYPE/);
      expect(evals).toBe(0);
    });
  });
});
