/**
 * One bench run's slice of the shared Redis and Postgres: a key prefix and a schema of its own, the
 * stores whose server answers, and the clean-up that deletes everything the run wrote (the records
 * would otherwise stay for their 72 h retention).
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mysqlStore } from '@hookline/mysql';
import { postgresStore } from '@hookline/postgres';
import { probeTcp } from '@hookline/testing';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createClient } from 'redis';
import { DATABASE_URL, MYSQL_URL, REDIS_URL, type RunLocation, STORE_KINDS, type StoreKind, serverOf, sqliteFile } from './open-store';

export interface RunScope extends RunLocation {
  /** The stores whose server is reachable (memory always). */
  kinds: StoreKind[];
  /** One sentence per server left out, for the section. */
  notes: string[];
  /** Deletes this run's Redis keys and drops its Postgres schema. */
  cleanup(): Promise<void>;
}

export async function openRunScope(): Promise<RunScope> {
  const id = randomUUID().replaceAll('-', '').slice(0, 12);
  const prefix = `hookline-bench-${id}:`;
  const schema = `hookline_bench_${id}`;
  const notes: string[] = [];
  const reachable = new Set<string>();
  for (const [server, url] of [
    ['Redis', REDIS_URL],
    ['PostgreSQL', DATABASE_URL],
    ['MySQL', MYSQL_URL],
  ] as const) {
    const reason = await probeTcp(url, server === 'MySQL' ? 3306 : undefined);
    if (reason === undefined) reachable.add(server);
    else notes.push(`${server} at ${url} was unreachable (${reason}): its stores are left out.`);
  }
  if (reachable.has('PostgreSQL')) {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    try {
      await postgresStore({ client: pool, schema }).setup();
    } finally {
      await pool.end();
    }
  }
  if (reachable.has('MySQL')) {
    const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 1 });
    try {
      await mysqlStore({ client: pool, table: schema }).setup();
    } finally {
      await pool.end();
    }
  }
  // HOOKLINE_BENCH_STORES_ONLY=ioredis (say) measures that store against the memory store alone.
  const only = (process.env.HOOKLINE_BENCH_STORES_ONLY ?? '').split(',').filter(Boolean);
  const kinds = STORE_KINDS.filter((kind) => {
    const server = serverOf(kind);
    if (only.length > 0 && kind !== 'memory' && !only.includes(kind)) return false;
    return server === undefined || reachable.has(server);
  });

  async function cleanup(): Promise<void> {
    if (reachable.has('Redis')) {
      const client = await createClient({ url: REDIS_URL }).connect();
      let deleted = 0;
      for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 5_000 })) {
        if (keys.length > 0) deleted += await client.unlink(keys);
      }
      await client.close();
      process.stderr.write(`  deleted ${deleted} Redis keys under ${prefix}\n`);
    }
    if (reachable.has('PostgreSQL')) {
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
      process.stderr.write(`  dropped Postgres schema ${schema}\n`);
    }
    if (reachable.has('MySQL')) {
      const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 1 });
      await pool.query(`DROP TABLE IF EXISTS \`${schema}\`, \`${schema}_versions\``); // setup() creates both
      await pool.end();
      process.stderr.write(`  dropped MySQL table ${schema}\n`);
    }
    const file = sqliteFile({ prefix, schema });
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  }

  return { prefix, schema, kinds, notes, cleanup };
}
