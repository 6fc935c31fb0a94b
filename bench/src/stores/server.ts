/**
 * One benchmark server process: `tsx server.ts <kind> <prefix> <schema> <pgPoolMax>`, the node:http
 * bridge over a receiver with one no-op handler and the store `kind` (see open-store.ts). Prints
 * `{"port":N}` on stdout when listening. On the IPC message "start" it marks its CPU time
 * (process.cpuUsage) and request count; on "stop" it replies `{ cpuMicros, requests, statusCounts }`
 * for the requests in between; "exit" closes the store's client and exits.
 */
import { createServer } from 'node:http';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { BENCH_SECRET } from '../lib/payloads';
import { openStore, STORE_KINDS, type StoreKind } from './open-store';

const [kind, prefix = '', schema = '', pgPoolMax = '10'] = process.argv.slice(2);
if (!STORE_KINDS.includes(kind as StoreKind)) throw new Error(`server.ts: unknown store ${kind}; use one of ${STORE_KINDS.join(', ')}`);

const opened = await openStore(kind as StoreKind, { prefix, schema }, Number(pgPoolMax));
const receiver = createReceiver({ secret: BENCH_SECRET, store: opened.store }).on('*', () => {});
// Store errors would be answered 503 and counted as non-2xx; say why on stderr, once.
let reported = false;
receiver.onError((error, info) => {
  if (reported) return;
  reported = true;
  process.stderr.write(`  [${kind} ${info.phase}] ${error instanceof Error ? error.message : String(error)}\n`);
});
const handler = createNodeHandler(receiver, { path: '/webhooks' });

let requests = 0;
let statusCounts: Record<number, number> = {};
const server = createServer((req, res) => {
  requests++;
  res.on('finish', () => {
    statusCounts[res.statusCode] = (statusCounts[res.statusCode] ?? 0) + 1;
  });
  handler(req, res);
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
    server.closeAllConnections();
    void opened.close().finally(() => process.exit(0));
  }
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
