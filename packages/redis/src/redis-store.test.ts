import { randomUUID } from 'node:crypto';
import { StoreDataError } from '@hookline/core/adapter';
import { requireServer } from '@hookline/testing';
import { describeStoreConformance } from '@hookline/testing/conformance';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStore } from './redis-store';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const server = await requireServer('Redis', REDIS_URL);
// Every run has its own prefix, so runs sharing one Redis never see each other's records.
const prefix = `hookline-test-${randomUUID()}:`;

async function nodeRedis() {
  const client = createClient({ url: REDIS_URL });
  client.on('error', () => {}); // errors surface as rejected commands; no unhandled 'error' event
  await client.connect();
  return client;
}

function ioredis() {
  // No reconnection or offline queue: once broken, commands reject at once.
  return new Redis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 0, enableOfflineQueue: true });
}

/** Deletes every key under `match` (SCAN, not KEYS: the shared Redis may hold many). */
async function deleteKeys(match: string): Promise<void> {
  const admin = await nodeRedis();
  try {
    for await (const keys of admin.scanIterator({ MATCH: match, COUNT: 1_000 })) {
      if (keys.length > 0) await admin.unlink(keys);
    }
  } finally {
    await admin.close();
  }
}

describe.skipIf(!server.reachable)('redisStore', () => {
  // Everything this file wrote, the conformance suites' keys included, is under the run's prefix.
  afterAll(() => deleteKeys(`${prefix}*`));

  describeStoreConformance(
    'redisStore (node-redis v5)',
    async () => {
      const client = await nodeRedis();
      return {
        store: redisStore({ client, prefix }),
        breakBackend: () => client.destroy(),
        cleanup: async () => {
          if (client.isOpen) await client.close();
        },
      };
    },
    { versions: true },
  );

  describeStoreConformance(
    'redisStore (ioredis v5)',
    () => {
      const client = ioredis();
      return {
        store: redisStore({ client, prefix }),
        breakBackend: () => client.disconnect(),
        cleanup: async () => {
          if (client.status !== 'end') await client.quit();
        },
      };
    },
    { versions: true },
  );

  describe('on the server', () => {
    let admin: Awaited<ReturnType<typeof nodeRedis>>;
    const io = ioredis();
    beforeAll(async () => {
      admin = await nodeRedis();
    });
    afterAll(async () => {
      await io.quit();
      await admin.close();
    });

    it('re-sends a script the server forgot (SCRIPT FLUSH), with both clients', async () => {
      for (const client of [admin, io]) {
        const store = redisStore({ client, prefix });
        const key = `noscript:wdl_${randomUUID()}`;
        const token = randomUUID();
        await admin.scriptFlush();
        expect(await store.claim(key, token, 60_000)).toEqual({ state: 'acquired', attempt: 1 });
        await admin.scriptFlush();
        expect(await store.extend(key, token, 60_000)).toBe(true);
        await admin.scriptFlush();
        expect(await store.complete(key, token, 60_000)).toBe(true);
        await admin.scriptFlush();
        expect(await store.claim(key, randomUUID(), 60_000)).toEqual({ state: 'completed' });
        const other = `noscript-release:wdl_${randomUUID()}`;
        await store.claim(other, token, 60_000);
        await admin.scriptFlush();
        expect(await store.release(other, token)).toBe(true);
      }
    });

    it('keeps one hash-tagged string key per delivery whose TTL is the retention, on the Redis clock', async () => {
      const store = redisStore({ client: admin, prefix, keepMs: 3_600_000 });
      const id = `wdl_${randomUUID()}`;
      const key = `ns:${id}`; // as the receiver builds it: namespace + deliveryId
      const token = randomUUID();
      await store.claim(key, token, 30_000);
      const redisKey = `${prefix}ns:{${id}}`;
      // A lease: attempt 1, its expiry in ms on the Redis clock (here the same machine's), the token last.
      const [kind, attempt, expiry, ...owner] = ((await admin.get(redisKey)) ?? '').split(':');
      expect([kind, attempt, owner.join(':')]).toEqual(['l', '1', token]);
      expect(Number(expiry) - Date.now()).toBeGreaterThan(25_000);
      expect(Number(expiry) - Date.now()).toBeLessThanOrEqual(30_000);
      // A lease record lives for lease + keepMs, so the attempt count survives an expired lease.
      expect(await admin.pTTL(redisKey)).toBeGreaterThan(3_600_000);
      await store.complete(key, token, 120_000);
      expect(await admin.get(redisKey)).toBe('c');
      const ttl = await admin.pTTL(redisKey);
      expect(ttl).toBeGreaterThan(100_000);
      expect(ttl).toBeLessThanOrEqual(120_000);
    });

    it('stores the receiver key hookline:wdl_… at hookline:{wdl_…} by default: no doubled prefix', async () => {
      const store = redisStore({ client: admin });
      const id = `wdl_${randomUUID().replaceAll('-', '')}`;
      const redisKey = `hookline:{${id}}`;
      try {
        const token = randomUUID();
        expect(await store.claim(`hookline:${id}`, token, 30_000)).toEqual({ state: 'acquired', attempt: 1 });
        expect(await admin.get(redisKey)).toMatch(/^l:1:\d+:/);
        expect(await admin.exists(`hookline:{hookline:${id}}`)).toBe(0);
        // A key without a namespace is tagged whole; one with ':' in the id is tagged after the last one.
        await store.claim(id, token, 30_000);
        expect(await admin.exists(`{${id}}`)).toBe(1);
      } finally {
        await admin.del([redisKey, `{${id}}`]);
      }
    });

    it("gives every key a hash tag that Redis and the clients' slot function read alike (non-empty, the key's first brace)", async () => {
      // The keys the store's scripts are called with, recorded on their way out (no KEYS or SCAN
      // over a shared Redis, which may hold millions of other keys).
      const sent: string[] = [];
      const recording = {
        evalSha: (sha1: string, options: { keys: string[]; arguments: string[] }) => {
          sent.push(...options.keys);
          return admin.evalSha(sha1, options);
        },
        eval: (script: string, options: { keys: string[]; arguments: string[] }) => {
          sent.push(...options.keys);
          return admin.eval(script, options);
        },
      };
      const store = redisStore({ client: recording, prefix });
      const id = randomUUID();
      const odd = ['{}:', '{a}:b:', 'a}b{:', '}', 'x:}', 'x:', '', 'x{:', 'x:{', 'x:{}', ':', 'hookline:', 'a:b:'].map(
        (head) => `${head}${id}`,
      );
      odd.push(`tail-empty-${id}:`, `${id}:}`, `${id}:{}`);
      for (const key of odd) {
        const token = randomUUID();
        sent.length = 0;
        expect(await store.claim(key, token, 60_000)).toEqual({ state: 'acquired', attempt: 1 });
        // The one record of this key, and it exists on the server.
        const [redisKey, ...others] = new Set(sent);
        expect(others, key).toEqual([]);
        expect(await admin.exists(redisKey!), redisKey).toBe(1);
        // Redis's rule: the slot comes from between the first '{' and the next '}' when that is not
        // empty; the clients' slot function agrees on exactly those keys.
        const open = redisKey!.indexOf('{');
        const close = redisKey!.indexOf('}', open + 1);
        expect(open, redisKey).toBeGreaterThanOrEqual(prefix.length);
        expect(close - open, `the tag of ${JSON.stringify(redisKey)} is empty or missing`).toBeGreaterThan(1);
        expect(await store.complete(key, token, 60_000)).toBe(true);
        await admin.del(redisKey!);
      }
      expect(() => redisStore({ client: admin, prefix: 'app{1}:' })).toThrow(/prefix/);
    });

    it('refuses keys with a lone surrogate with a StoreDataError instead of letting them collide, with both clients', async () => {
      for (const client of [admin, io]) {
        const store = redisStore({ client, prefix });
        const id = `lone:wdl_${randomUUID()}`;
        for (const odd of [`${id}\ud800`, `${id}\udfff`, `x\udc00y:${id}`]) {
          const refused = await Promise.resolve(store.claim(odd, randomUUID(), 60_000)).then(String, (error: unknown) => error);
          expect(StoreDataError.is(refused), String(refused)).toBe(true);
          for (const operation of [store.complete(odd, 't', 60_000), store.release(odd, 't'), store.extend(odd, 't', 60_000)]) {
            await expect(operation).rejects.toThrow(/not well-formed Unicode/);
          }
        }
        // The character UTF-8 would have turned them into is an ordinary key, and a surrogate pair too.
        expect((await store.claim(`${id}\ufffd`, randomUUID(), 60_000)).state).toBe('acquired');
        expect((await store.claim(`${id}\ud83d\udd11`, randomUUID(), 60_000)).state).toBe('acquired');
        expect(await admin.keys(`${prefix}lone:{wdl_*`)).not.toHaveLength(0);
      }
    });

    it('sends the ioredis commands of one turn of the event loop in one socket write, each answered as its own', async () => {
      const client = ioredis();
      await new Promise((resolve) => client.once('ready', resolve));
      try {
        const store = redisStore({ client, prefix });
        const stream = (client as unknown as { stream: { _write: () => void; _writev: () => void } }).stream;
        let writes = 0;
        for (const method of ['_write', '_writev'] as const) {
          const original = stream[method];
          stream[method] = function (this: unknown, ...args: unknown[]) {
            writes++;
            return (original as (...a: unknown[]) => unknown).apply(this, args);
          } as never;
        }
        const keys = Array.from({ length: 20 }, () => `cork:wdl_${randomUUID()}`);
        const claims = await Promise.all(keys.map((key) => store.claim(key, `t-${key}`, 60_000)));
        expect(claims).toEqual(keys.map(() => ({ state: 'acquired', attempt: 1 })));
        expect(writes).toBeLessThan(keys.length / 4);
        const before = writes;
        const done = await Promise.all(keys.map((key, i) => store.complete(key, i % 2 === 0 ? `t-${key}` : 'not-the-owner', 60_000)));
        expect(done).toEqual(keys.map((_, i) => i % 2 === 0));
        expect(writes - before).toBeLessThan(keys.length / 4);
      } finally {
        client.disconnect();
      }
    });

    it('refuses a duration that is not a positive number before touching Redis', async () => {
      const store = redisStore({ client: admin, prefix });
      await expect(store.claim('x', 't', 0)).rejects.toThrow(RangeError);
      await expect(store.complete('x', 't', Number.NaN)).rejects.toThrow(/retentionMs/);
      expect(() => redisStore({ client: admin, keepMs: -1 })).toThrow(/keepMs/);
    });

    it('tells a client it cannot use apart from one it can', () => {
      expect(() => redisStore({ client: {} as never })).toThrow(/node-redis v5 client .* ioredis v5/);
    });
  });
});
