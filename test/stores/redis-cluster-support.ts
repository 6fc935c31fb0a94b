// A private Redis Cluster for the cluster tests: 3 masters and 3 replicas (6 redis-server processes on
// free ports, never the shared Redis), joined with `redis-cli --cluster create`. `close()` kills every
// node it started and removes their directories.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { IdempotencyStore } from '@hookline/core';
import { redisStore } from '@hookline/redis';
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { printedReady } from '../support/child-ready';
import { freePort, retryOnPortClash } from '../support/free-port';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Where the cluster tests find redis-server and redis-cli, or why they cannot run. */
export async function clusterTools(): Promise<string | undefined> {
  try {
    const { stdout } = await run('redis-server', ['--version']);
    const major = Number(/v=(\d+)/.exec(stdout)?.[1] ?? 0);
    if (major < 7) return `redis-server ${major} is older than 7 (the tests set cluster-port)`;
    await run('redis-cli', ['--version']);
    return undefined;
  } catch (error) {
    return `redis-server or redis-cli is not installed (${(error as Error).message.split('\n')[0]})`;
  }
}

/** One node: its port and the process. */
export interface ClusterNode {
  port: number;
  process: ChildProcess;
}

export interface OwnCluster {
  /** Every node, masters and replicas, as the clients' start-up list. */
  nodes: { host: string; port: number }[];
  /** Runs a redis-cli command against one node; resolves its output. */
  cli(port: number, ...args: string[]): Promise<string>;
  /** The port of the master holding `key` (looked up with CLUSTER KEYSLOT and CLUSTER SLOTS), and its replicas'. */
  ownerOf(key: string): Promise<{ master: number; replicas: number[] }>;
  /**
   * A manual failover (CLUSTER FAILOVER on a replica of the master holding `key`, which waits for the
   * replica to catch up, so no acknowledged write is lost); resolves once the replica serves the slot.
   */
  failoverOwnerOf(key: string): Promise<{ from: number; to: number }>;
  /** Kills every node and removes their directories. */
  close(): Promise<void>;
}

/**
 * Starts 6 nodes and joins them as 3 masters with one replica each; resolves once every slot is served.
 * A node whose port was taken meanwhile fails the start, which then begins again on new ports.
 */
export const startCluster = (): Promise<OwnCluster> => retryOnPortClash(startClusterOnce);

async function startClusterOnce(): Promise<OwnCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'hookline-redis-cluster-'));
  const nodes: ClusterNode[] = [];
  const cli = async (port: number, ...args: string[]) => (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout;

  async function close(): Promise<void> {
    await Promise.all(
      nodes.map(
        (node) =>
          new Promise<void>((resolve) => {
            if (node.process.exitCode !== null || node.process.signalCode !== null) return resolve();
            node.process.once('exit', () => resolve());
            node.process.kill('SIGKILL');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  }

  try {
    for (let i = 0; i < 6; i++) {
      const [port, bus] = [await freePort(), await freePort()];
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--cluster-port',
          String(bus),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          '2000',
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      nodes.push({ port, process: child });
      await printedReady(child, 'stdout', 'Ready to accept connections', `redis-server ${port}`, 10_000);
      child.stderr!.resume();
    }
    await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes']);
    // Every node agrees that every slot is served, and every replica has synced.
    for (let waited = 0; ; waited += 100) {
      const infos = await Promise.all(nodes.map((n) => cli(n.port, 'CLUSTER', 'INFO')));
      const replicasSynced = await Promise.all(
        nodes.map(async (n) => {
          const info = await cli(n.port, 'INFO', 'replication');
          return info.includes('role:master') || info.includes('master_link_status:up');
        }),
      );
      if (infos.every((info) => info.includes('cluster_state:ok')) && replicasSynced.every(Boolean)) break;
      if (waited > 30_000) throw new Error(`the cluster did not come up: ${infos.join('\n')}`);
      await sleep(100);
    }
  } catch (error) {
    await close();
    throw error;
  }

  const ports = nodes.map((n) => n.port);
  async function ownerOf(key: string): Promise<{ master: number; replicas: number[] }> {
    const slot = Number((await cli(ports[0]!, 'CLUSTER', 'KEYSLOT', key)).trim());
    // The master whose own line in CLUSTER NODES lists a slot range covering the key's slot.
    for (const port of ports) {
      const master = (await cli(port, 'ROLE')).split('\n')[0]?.trim() === 'master';
      if (!master) continue;
      const mine = (await cli(port, 'CLUSTER', 'NODES'))
        .split('\n')
        .find((line) => line.includes('myself'))!
        .split(' ');
      const ranges = mine.slice(8);
      if (!ranges.some((range) => covers(range, slot))) continue;
      const id = mine[0]!;
      const replicas = (await cli(port, 'CLUSTER', 'REPLICAS', id))
        .split('\n')
        .map((line) => /:(\d+)@/.exec(line)?.[1])
        .filter((p): p is string => p !== undefined)
        .map(Number);
      return { master: port, replicas };
    }
    throw new Error(`no master serves slot ${slot}`);
  }

  return {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    cli,
    ownerOf,
    async failoverOwnerOf(key) {
      const { master, replicas } = await ownerOf(key);
      const replica = replicas[0];
      if (replica === undefined) throw new Error(`master ${master} has no replica`);
      const answer = (await cli(replica, 'CLUSTER', 'FAILOVER')).trim();
      if (answer !== 'OK') throw new Error(`CLUSTER FAILOVER on ${replica}: ${answer}`);
      for (let waited = 0; ; waited += 50) {
        const role = (await cli(replica, 'ROLE')).split('\n')[0]?.trim();
        if (role === 'master' && (await ownerOf(key)).master === replica) return { from: master, to: replica };
        if (waited > 20_000) throw new Error(`replica ${replica} did not take over from ${master}`);
        await sleep(50);
      }
    },
    close,
  };
}

function covers(range: string, slot: number): boolean {
  if (range.startsWith('[')) return false; // a slot being migrated
  const [start, end = start] = range.split('-').map(Number) as [number, number?];
  return slot >= start && slot <= (end ?? start);
}

/** A connected cluster client of either library, as the store takes it, and how to close it. */
export interface ClusterClient {
  store: (prefix: string) => IdempotencyStore;
  close(): Promise<void>;
}

/** node-redis's cluster client, connected. */
export async function nodeRedisCluster(nodes: { host: string; port: number }[]): Promise<ClusterClient> {
  const client = createCluster({ rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
  client.on('error', () => {});
  await client.connect();
  return { store: (prefix) => redisStore({ client, prefix }), close: () => client.close() };
}

/** ioredis's cluster client, ready. */
export async function ioredisCluster(nodes: { host: string; port: number }[]): Promise<ClusterClient> {
  const client = new Cluster(nodes);
  client.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    client.once('ready', () => resolve());
    client.once('end', () => reject(new Error('ioredis Cluster ended before it was ready')));
  });
  return {
    store: (prefix) => redisStore({ client, prefix }),
    close: async () => {
      client.disconnect();
    },
  };
}
