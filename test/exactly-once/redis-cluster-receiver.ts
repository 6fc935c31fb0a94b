// One receiver process of the Redis Cluster exactly-once test: the Redis store over a cluster client
// (CLIENT=node-redis: createCluster; CLIENT=ioredis: Cluster) started from CLUSTER_NODES (host:port,…).
import { redisStore } from '@hookline/redis';
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { env, serveReceiver } from './sqlite-harness';

const nodes = env('CLUSTER_NODES')
  .split(',')
  .map((address) => {
    const [host = '127.0.0.1', port = '0'] = address.split(':');
    return { host, port: Number(port) };
  });
const prefix = env('STORE_PREFIX');

if (env('CLIENT') === 'node-redis') {
  const client = createCluster({ rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
  client.on('error', () => {});
  await client.connect();
  serveReceiver(redisStore({ client, prefix }));
} else {
  const client = new Cluster(nodes);
  client.on('error', () => {});
  await new Promise((resolve) => client.once('ready', resolve));
  serveReceiver(redisStore({ client, prefix }));
}
