// The Postgres store behind a hung database, over a pg Pool configured as the package README says: a
// private PostgreSQL paused with SIGSTOP, the shared one behind a proxy that stops forwarding, and the
// shared one with the claimed rows locked by another transaction. Each time the receiver answers 503
// within storeTimeoutMs and runs nothing; after recovery each delivery completes exactly once.
import { randomUUID } from 'node:crypto';
import { postgresStore } from '@hookline/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, requirePostgres } from '../support/servers';
import { hungStoreScenario } from './support/hung-store-scenario';
import { ownPostgresUnavailable, startOwnPostgres } from './support/own-postgres';
import { startStallingProxy } from './support/stalling-proxy';

const shared = await requirePostgres();
const cannotStartOwn = ownPostgresUnavailable();
if (cannotStartOwn !== undefined) {
  if (process.env.CI === 'true') throw new Error(`${cannotStartOwn}; CI=true, so this is a failure, not a skip`);
  console.warn(`\n⚠️  SKIPPING the paused-PostgreSQL test: ${cannotStartOwn}.\n`);
}
// Every run has its own schema on the shared server, dropped afterwards.
const schema = `hookline_faults_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

/** A pg Pool with the README's fail-fast settings. */
function failFastPool(connectionString: string) {
  const pool = new pg.Pool({
    connectionString,
    max: 6,
    connectionTimeoutMillis: 2_000, // waiting for a connection (the pool's queue included)
    query_timeout: 3_000, // client side: a statement whose answer never comes
    options: '-c statement_timeout=3000', // server side: a statement that runs too long
  });
  pool.on('error', () => {}); // idle clients losing their connection: the next query reconnects
  return pool;
}

describe('Postgres store under faults', () => {
  it.skipIf(cannotStartOwn !== undefined)(
    'a paused PostgreSQL (SIGSTOP): 503 within the limit, nothing run; after SIGCONT each delivery completes once',
    async () => {
      const server = await startOwnPostgres();
      const pool = failFastPool(server.url);
      try {
        const store = postgresStore({ client: pool });
        await store.setup();
        await hungStoreScenario({ store, hang: server.pause, recover: server.resume });
      } finally {
        await pool.end();
        await server.close();
      }
    },
    60_000,
  );

  describe.skipIf(!shared.reachable)('on the shared server', () => {
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    beforeAll(() => postgresStore({ client: admin, schema }).setup());
    afterAll(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });

    it('a proxy that stops forwarding: 503 within the limit, nothing run; forwarding again, each completes once', async () => {
      const target = new URL(DATABASE_URL);
      const proxy = await startStallingProxy(target.hostname, Number(target.port || 5432));
      const viaProxy = new URL(DATABASE_URL);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      const pool = failFastPool(viaProxy.toString());
      try {
        await hungStoreScenario({ store: postgresStore({ client: pool, schema }), hang: proxy.stall, recover: proxy.resume });
      } finally {
        proxy.resume();
        await pool.end();
        await proxy.close();
      }
    });

    // The receiver's limit (1 s) comes first with the store's default lockTimeoutMs (4 s); with a
    // shorter lockTimeoutMs the database gives up first (SQLSTATE 55P03). Both answer 503.
    for (const lockTimeoutMs of [undefined, 300]) {
      it(`claims blocked by another transaction's row locks (lockTimeoutMs ${lockTimeoutMs ?? 'default'}): 503 within the limit; unlocked, each completes once`, async () => {
        const pool = failFastPool(DATABASE_URL);
        const holder = await admin.connect();
        const table = `"${schema}".hookline_idempotency`;
        try {
          await hungStoreScenario({
            store: postgresStore({ client: pool, schema, lockTimeoutMs }),
            hang: async (keys) => {
              // Released rows (as after a failed attempt), then locked by a transaction that stays open.
              await admin.query(
                `INSERT INTO ${table} (key, state, attempt, expires_at, purge_at) SELECT k, 'r', 1, now(), now() + interval '1 hour' FROM unnest($1::text[]) AS k`,
                [keys],
              );
              await holder.query('BEGIN');
              const locked = await holder.query(`SELECT key FROM ${table} WHERE key = ANY($1) FOR UPDATE`, [keys]);
              expect(locked.rowCount).toBe(keys.length);
            },
            recover: () => holder.query('ROLLBACK'),
          });
        } finally {
          await holder.query('ROLLBACK').catch(() => {});
          holder.release();
          await pool.end();
        }
      });
    }
  });
});
