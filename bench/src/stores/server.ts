/**
 * One benchmark server process: `tsx server.ts <kind> <prefix> <schema> <pgPoolMax>`, the node:http
 * bridge over a receiver with one no-op handler and the store `kind` (see open-store.ts). Prints
 * `{"port":N}` on stdout when listening and answers the suite's measurements (lib/bench-server.ts);
 * "exit" also closes the store's client.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { benchMeter } from '../lib/bench-server';
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
    await opened.close();
  });
});
