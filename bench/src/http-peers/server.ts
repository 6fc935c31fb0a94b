/**
 * One benchmark server process: `tsx server.ts hookline|octokit`. Prints `{"port":N}` on stdout when
 * listening; on the IPC messages "start" and "stop" it measures its own CPU time (process.cpuUsage)
 * and the requests it answered in between, and replies `{ cpuMicros, requests }`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhooks, createNodeMiddleware } from '@octokit/webhooks';
import { createNodeHandler, createReceiver, memoryStore } from '@hookline/core';
import { benchMeter } from '../lib/bench-server';
import { BENCH_SECRET } from '../lib/payloads';

const kind = process.argv[2];
let listener: Parameters<typeof createServer>[1];
if (kind === 'hookline') {
  const receiver = createReceiver({ secret: BENCH_SECRET, store: memoryStore({ maxEntries: 5_000_000 }) }).on('*', () => {});
  listener = createNodeHandler(receiver, { path: '/webhooks' });
} else if (kind === 'octokit') {
  const webhooks = new Webhooks({ secret: BENCH_SECRET });
  webhooks.on('push', () => {});
  listener = createNodeMiddleware(webhooks, { path: '/webhooks' }) as unknown as Parameters<typeof createServer>[1];
} else {
  throw new Error(`server.ts: unknown kind ${kind}; use hookline or octokit`);
}

const meter = benchMeter();
const server = createServer((req, res) => {
  meter.count();
  (listener as (q: typeof req, s: typeof res) => void)(req, res);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  meter.serve((server.address() as AddressInfo).port, () => server.close());
});
