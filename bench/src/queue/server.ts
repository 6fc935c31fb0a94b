/**
 * One web process of the queue suite: `tsx server.ts <mode> <prefix> <queue> <handlerMs> [build]`, the
 * node:http bridge over a receiver with the Redis store (ioredis) and one handler that takes
 * `handlerMs` (0: a no-op). `sync` runs the handler in the request; `bullmq` enqueues on BullMQ
 * (same Redis) and answers 202, with the `@hookline/bullmq` of `build` (a `dist/` directory) when it
 * is given. Speaks the benchmark server protocol (../lib/bench-server.ts).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bullmqQueue as workspaceBullmqQueue } from '@hookline/bullmq';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { redisStore } from '@hookline/redis';
import { Redis } from 'ioredis';
import { benchMeter } from '../lib/bench-server';
import { BENCH_SECRET } from '../lib/payloads';

const [mode = 'sync', prefix = 'hookline-bench-queue:', queueName = 'hookline-bench', handlerMs = '0', build = ''] = process.argv.slice(2);
const bullmqQueue: typeof workspaceBullmqQueue =
  build === '' ? workspaceBullmqQueue : (await import(pathToFileURL(join(resolve(build), 'index.js')).href)).bullmqQueue;
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const client = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
await new Promise((resolve) => client.once('ready', resolve));
const queue = mode === 'bullmq' ? bullmqQueue({ connection: { url: redisUrl, maxRetriesPerRequest: null }, name: queueName }) : undefined;
const receiver = createReceiver({ secret: BENCH_SECRET, store: redisStore({ client, prefix }), ...(queue ? { queue } : {}) });
const delay = Number(handlerMs);
receiver.on('*', delay > 0 ? () => new Promise((resolve) => setTimeout(resolve, delay)) : () => {});
let reported = false;
receiver.onError((error, info) => {
  if (reported) return;
  reported = true;
  process.stderr.write(`  [${mode} ${info.phase}] ${error instanceof Error ? error.message : String(error)}\n`);
});
const handler = createNodeHandler(receiver, { path: '/webhooks' });
const meter = benchMeter();
const server = createServer((req, res) => {
  meter.count();
  handler(req, res);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  meter.serve((server.address() as AddressInfo).port, async () => {
    server.close();
    server.closeAllConnections();
    await queue?.close();
    client.disconnect();
  });
});
