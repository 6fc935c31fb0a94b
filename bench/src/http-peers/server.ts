/**
 * One benchmark server process: `tsx server.ts hookline|octokit`. Prints `{"port":N}` on stdout when
 * listening; on the IPC messages "start" and "stop" it measures its own CPU time (process.cpuUsage)
 * and the requests it answered in between, and replies `{ cpuMicros, requests }`.
 */
import { createServer } from 'node:http';
import { Webhooks, createNodeMiddleware } from '@octokit/webhooks';
import { createNodeHandler, createReceiver, memoryStore } from '@hookline/core';
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

let requests = 0;
let statusCounts: Record<number, number> = {};
const server = createServer((req, res) => {
  requests++;
  res.on('finish', () => {
    statusCounts[res.statusCode] = (statusCounts[res.statusCode] ?? 0) + 1;
  });
  (listener as (q: typeof req, s: typeof res) => void)(req, res);
});
server.keepAliveTimeout = 60_000;

let mark = process.cpuUsage();
let markRequests = 0;
process.on('message', (message) => {
  if (message === 'start') {
    mark = process.cpuUsage();
    markRequests = requests;
    statusCounts = {};
  } else if (message === 'stop') {
    const used = process.cpuUsage(mark);
    process.send?.({ cpuMicros: used.user + used.system, requests: requests - markRequests, statusCounts });
  } else if (message === 'exit') {
    server.close();
    process.exit(0);
  }
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
