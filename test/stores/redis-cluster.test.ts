// The Redis store on a real Redis Cluster (3 masters, 3 replicas, started by this file on free ports),
// through both clients' cluster modes: node-redis `createCluster` and ioredis `Cluster`. The store's
// keys are hash-tagged, so each operation touches one slot; these tests run the store conformance
// suite on the cluster, and check that a manual failover of the master holding keys loses no record.
import { randomUUID } from 'node:crypto';
import { describeStoreConformance } from '@hookline/testing/conformance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterTools, ioredisCluster, nodeRedisCluster, type OwnCluster, startCluster } from './redis-cluster-support';

const missing = await clusterTools();
if (missing !== undefined) {
  if (process.env.CI === 'true') throw new Error(`Redis Cluster tests: ${missing}; CI=true, so this is a failure, not a skip`);
  console.warn(`\n⚠️  SKIPPING Redis Cluster tests: ${missing}.\n`);
}

const CLIENTS = [
  ['node-redis createCluster', nodeRedisCluster],
  ['ioredis Cluster', ioredisCluster],
] as const;

describe.skipIf(missing !== undefined)('Redis store on Redis Cluster (3 masters, 3 replicas)', () => {
  let cluster: OwnCluster;
  beforeAll(async () => {
    cluster = await startCluster();
  }); // vitest.config.ts's hookTimeout (120 s): a start on a busy machine may begin again on new ports
  afterAll(async () => {
    await cluster?.close();
  });

  for (const [name, connect] of CLIENTS) {
    describeStoreConformance(
      `redisStore on Redis Cluster (${name})`,
      async () => {
        const client = await connect(cluster.nodes);
        let closed = false;
        return {
          store: client.store(`hookline-cluster-${randomUUID()}:`),
          breakBackend: async () => {
            closed = true;
            await client.close();
          },
          cleanup: async () => {
            if (!closed) await client.close();
          },
        };
      },
      { rounds: 5, versions: true },
    );
  }

  it('spreads the keys over every master, each record in its own slot', async () => {
    const client = await nodeRedisCluster(cluster.nodes);
    try {
      const prefix = `hookline-spread-${randomUUID()}:`;
      const store = client.store(prefix);
      const keys = Array.from({ length: 60 }, () => `hookline:wdl_${randomUUID()}`);
      for (const key of keys) expect(await store.claim(key, 't', 60_000)).toMatchObject({ state: 'acquired' });
      const owners = new Set(await Promise.all(keys.map(async (key) => (await cluster.ownerOf(`${prefix}{${key}}`)).master)));
      expect(owners.size).toBe(3);
    } finally {
      await client.close();
    }
  });

  it('a manual failover of the master holding the keys loses no record, for either client', async () => {
    const clients = await Promise.all(CLIENTS.map(([, connect]) => connect(cluster.nodes)));
    try {
      const prefix = `hookline-failover-${randomUUID()}:`;
      const stores = clients.map((c) => c.store(prefix));
      // Spread over the 3 masters; the failover moves the slots of the first key's master.
      const keys = Array.from({ length: 200 }, (_, i) => `hookline:wdl_${i}_${randomUUID()}`);
      for (const [i, key] of keys.entries()) {
        const store = stores[i % 2]!;
        expect(await store.claim(key, 'owner', 60_000)).toEqual({ state: 'acquired', attempt: 1 });
        if (i % 4 !== 3) expect(await store.complete(key, 'owner', 60_000)).toBe(true);
      }
      const moved = await cluster.failoverOwnerOf(`${prefix}{${keys[0]}}`);
      expect(moved.to).not.toBe(moved.from);
      // Both clients follow the slot to its new master (MOVED) and every record is there.
      for (const store of stores) {
        for (const [i, key] of keys.entries()) {
          const answer = await retryThroughFailover(() => store.claim(key, 'late', 60_000));
          expect(answer.state).toBe(i % 4 === 3 ? 'in_progress' : 'completed');
        }
      }
      // The leases still belong to their owner on the new master.
      for (const [i, key] of keys.entries()) {
        if (i % 4 === 3) expect(await retryThroughFailover(() => stores[i % 2]!.complete(key, 'owner', 60_000))).toBe(true);
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  }, 60_000);
});

/** A call during a failover may fail (the receiver answers 503 and the service retries); so does this, a few times. */
async function retryThroughFailover<T>(call: () => Promise<T> | T): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
