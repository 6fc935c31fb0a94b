// Exactly-once across 3 receiver processes sharing the Redis store on a Redis Cluster of this test's
// own (3 masters, 3 replicas), with each cluster client (node-redis createCluster, ioredis Cluster),
// and through a manual failover of the master holding a delivery's record mid-run.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterTools, type OwnCluster, startCluster } from '../stores/redis-cluster-support';
import { DATABASE_URL, requirePostgres } from '../support/servers';
import { createRecords, deliver, newDeliveryId, pool, type ReceiverProcess, signedDelivery } from './harness';
import { exactlyOnceUnderConcurrency } from './scenarios';
import { startReceiverScript } from './sqlite-harness';

const server = await requirePostgres(); // the handlers record their runs there
const missing = await clusterTools();
if (missing !== undefined) {
  if (process.env.CI === 'true') throw new Error(`Redis Cluster tests: ${missing}; CI=true, so this is a failure, not a skip`);
  console.warn(`\n⚠️  SKIPPING Redis Cluster exactly-once tests: ${missing}.\n`);
}
const run = randomUUID().replaceAll('-', '').slice(0, 12);
const isOk = (status: number) => status >= 200 && status < 300;

describe.skipIf(!server.reachable || missing !== undefined)('exactly once across processes: Redis store on Redis Cluster', () => {
  let cluster: OwnCluster;
  let records: Awaited<ReturnType<typeof createRecords>>;
  beforeAll(async () => {
    [cluster, records] = await Promise.all([startCluster(), createRecords(DATABASE_URL, `hookline_eo_cluster_${run}`)]);
  }); // vitest.config.ts's hookTimeout (120 s): a start on a busy machine may begin again on new ports
  afterAll(async () => {
    await cluster?.close();
    await records?.drop();
  });

  describe.each(['node-redis', 'ioredis'])('%s cluster client', (client) => {
    const prefix = `hookline-eo-cluster-${client}-${run}:`;
    let receivers: ReceiverProcess[] = [];
    beforeAll(async () => {
      const env = {
        CLIENT: client,
        CLUSTER_NODES: cluster.nodes.map((n) => `${n.host}:${n.port}`).join(','),
        STORE_PREFIX: prefix,
        RECORDS_URL: DATABASE_URL,
        RECORDS_TABLE: records.table,
        WEBHOOK_SECRET: 'whsec_exactly_once_test',
        LEASE_MS: '30000',
      };
      receivers = await Promise.all([0, 1, 2].map(() => startReceiverScript('redis-cluster-receiver.ts', env)));
    }, 60_000);
    afterAll(async () => {
      await Promise.all(receivers.map((r) => r.stop()));
    });

    it('handles 200 deliveries, each posted 3 times at once to 3 processes, exactly once', async () => {
      await exactlyOnceUnderConcurrency(receivers, records, 200);
    }, 120_000);

    it('the master holding a delivery fails over mid-run: no delivery lost or handled twice', async () => {
      const ports = () => receivers.map((r) => r.port);
      const ids = Array.from({ length: 150 }, newDeliveryId);
      const premature: string[] = [];
      const statuses = new Map<number, number>();
      let succeeded = 0;
      let failover: Promise<{ from: number; to: number }> | undefined;
      // When a third of them are done, the master holding the record of the one just done fails over
      // while the rest are sent.
      const failOverOwnerOf = async (id: string) => {
        const found = await Promise.all(cluster.nodes.map((n) => cluster.cli(n.port, '--scan', '--pattern', `${prefix}*${id}*`)));
        const key = found.flatMap((out) => out.split('\n')).find((line) => line.length > 0);
        if (key === undefined) throw new Error(`no record of ${id} on any node`);
        return cluster.failoverOwnerOf(key);
      };
      await pool(ids, 20, async (id, index) => {
        const delivery = signedDelivery(id, { n: index });
        await Promise.all(
          [0, 1, 2].map((copy) =>
            deliver(ports, index + copy, delivery, async (status) => {
              statuses.set(status, (statuses.get(status) ?? 0) + 1);
              if (!isOk(status)) return;
              if ((await records.runsOf(id)) < 1) premature.push(id);
              if (++succeeded === Math.floor(ids.length / 3) && failover === undefined) failover = failOverOwnerOf(id);
            }),
          ),
        );
      });
      const moved = await failover;
      expect(moved?.to).not.toBe(moved?.from);
      const runs = await records.of(ids);
      expect(premature).toEqual([]);
      expect(runs.size).toBe(ids.length);
      expect([...runs.values()].filter((r) => r.runs !== 1)).toEqual([]);
      // 503 (a store call failed during the switch) and 409 are retried like any non-2xx.
      expect([...statuses.keys()].filter((s) => ![200, 409, 503].includes(s))).toEqual([]);
    }, 120_000);
  });
});
