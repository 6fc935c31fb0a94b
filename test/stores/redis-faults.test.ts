// The Redis store behind a hung Redis, with node-redis and with ioredis configured as the package
// README says: a private redis-server paused with SIGSTOP, the shared one behind a proxy that stops
// forwarding, and a private one killed under node-redis's default client. Each time the receiver
// answers 503 within storeTimeoutMs and runs nothing; after recovery each delivery completes once.
import { randomUUID } from 'node:crypto';
import { redisStore, type RedisClientLike } from '@hookline/redis';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, describe, it } from 'vitest';
import { REDIS_URL, requireRedis } from '../support/servers';
import { hungStoreScenario } from './support/hung-store-scenario';
import { startOwnRedis } from '../support/own-redis';
import { startStallingProxy } from './support/stalling-proxy';

const shared = await requireRedis();
// The shared Redis is reached only through the proxy, under this run's prefix, deleted afterwards.
const prefix = `hookline-faults-${randomUUID()}:`;

/** node-redis with the README's fail-fast settings. */
async function nodeRedis(url: string) {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2_000, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 2_000) },
  });
  client.on('error', () => {}); // surfaced as rejected commands
  await client.connect();
  return { client: client as RedisClientLike, close: () => client.destroy() };
}

/** ioredis with the README's fail-fast settings. */
async function ioredis(url: string) {
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 2_000, connectTimeout: 2_000 });
  client.on('error', () => {});
  await new Promise((resolve, reject) => {
    client.once('ready', resolve);
    client.once('end', () => reject(new Error('ioredis could not connect')));
  });
  return { client: client as RedisClientLike, close: async () => client.disconnect() };
}

const clients = { 'node-redis': nodeRedis, ioredis };

describe('Redis store under faults', () => {
  for (const [name, connect] of Object.entries(clients)) {
    describe(name, () => {
      it('a paused Redis (SIGSTOP): 503 within the limit, nothing run; after SIGCONT each delivery completes once', async () => {
        const redis = await startOwnRedis();
        const { client, close } = await connect(redis.url);
        try {
          await hungStoreScenario({ store: redisStore({ client }), hang: redis.pause, recover: redis.resume });
        } finally {
          await close();
          await redis.close();
        }
      });

      it.skipIf(!shared.reachable)(
        'a proxy that stops forwarding: 503 within the limit, nothing run; forwarding again, each completes once',
        async () => {
          const target = new URL(REDIS_URL);
          const proxy = await startStallingProxy(target.hostname, Number(target.port || 6379));
          const viaProxy = new URL(REDIS_URL);
          viaProxy.hostname = '127.0.0.1';
          viaProxy.port = String(proxy.port);
          const { client, close } = await connect(viaProxy.toString());
          try {
            await hungStoreScenario({ store: redisStore({ client, prefix }), hang: proxy.stall, recover: proxy.resume });
          } finally {
            await close();
            await proxy.close();
          }
        },
      );
    });
  }

  it("a killed Redis under node-redis's default client (offline queue on): 503 within the limit; restarted, each completes once", async () => {
    const redis = await startOwnRedis();
    const client = createClient({ url: redis.url });
    client.on('error', () => {});
    await client.connect();
    try {
      await hungStoreScenario({ store: redisStore({ client }), hang: redis.kill, recover: redis.start });
    } finally {
      client.destroy();
      await redis.close();
    }
  });

  afterAll(async () => {
    if (!shared.reachable) return;
    const admin = await createClient({ url: REDIS_URL }).connect();
    for await (const keys of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 1_000 })) {
      if (keys.length > 0) await admin.unlink(keys);
    }
    await admin.close();
  });
});
