/**
 * One receiver process that remembers its deliveries across restarts: the node:http bridge over the
 * SQLite store, in the file HOOKLINE_DB (./hookline.db by default). Stop it and start it again: a
 * delivery it completed before is still answered as a duplicate, where the memory store would run it
 * again. node:sqlite on Node 22.13+, better-sqlite3 on Node 20.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-sqlite start
 */
import http from 'node:http';
import { createRequire } from 'node:module';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { type SqliteDatabaseLike, sqliteStore } from '@hookline/sqlite';

const port = Number(process.env.PORT ?? 3000);
const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
  process.exit(2);
}
const file = process.env.HOOKLINE_DB ?? './hookline.db';

// node:sqlite where this Node has it (22.13+): the store opens the file itself. Node 20: better-sqlite3.
const hasNodeSqlite = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule?.('node:sqlite') !== undefined;
const store = hasNodeSqlite
  ? sqliteStore({ filename: file })
  : sqliteStore({ client: new (createRequire(import.meta.url)('better-sqlite3') as new (path: string) => SqliteDatabaseLike)(file) });

const receiver = createReceiver({ secret, store });
receiver.on('*', async (delivery) => {
  process.stdout.write(`${JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId })}\n`);
});
receiver.onError((error, info) => {
  console.error(`[${info.phase}] ${info.delivery?.deliveryId ?? ''} ${error instanceof Error ? error.message : String(error)}`);
});

const server = http.createServer(createNodeHandler(receiver, { path: '/webhooks' }));
server.listen(port, '127.0.0.1', () => {
  console.error(`hookline SQLite example listening on http://127.0.0.1:${port}/webhooks, remembering in ${file}`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () =>
    server.close(() => {
      store.close();
      process.exit(0);
    }),
  );
}
