// Bytes per completed record on disk, for the SQLite and MySQL stores, at 1,000,000 records
// (RECORDS to change it). Keys are what the receiver stores: 'hookline:' + 'wdl_' + 24 characters.
//
//   pnpm --filter @hookline/bench exec tsx --conditions=@hookline/source src/stores/disk-bytes.ts
//
// SQLite: every record goes through the store (claim, then complete), 10,000 to a transaction so the
// run takes seconds; the size is the file's after a WAL checkpoint. MySQL: the first 1,000 go through
// the store; the rest are the same rows (a completed record: state 'c', no token, attempt 1, the
// store's expiry and purge times) inserted 2,000 to a statement, since one round trip per record
// would take minutes. The size is InnoDB's (clustered index + the purge_at index) after ANALYZE TABLE.
// Each run uses a file / table of its own and removes it afterwards.
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mysqlStore } from '@hookline/mysql';
import { sqliteStore } from '@hookline/sqlite';
import { probeTcp } from '@hookline/testing';
import mysql from 'mysql2/promise';
import { MYSQL_URL, openSqlite, sqliteDriver } from './open-store';

const RECORDS = Number(process.env.RECORDS ?? 1_000_000);
const RETENTION = 72 * 3_600_000;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function key(): string {
  let id = 'hookline:wdl_';
  for (const byte of randomBytes(24)) id += ALPHABET[byte % ALPHABET.length];
  return id;
}

async function sqliteBytes(): Promise<number> {
  const path = join(tmpdir(), `hookline-disk-bytes-${randomUUID()}.db`);
  const db = openSqlite(path);
  try {
    const store = sqliteStore({ client: db, pruneEveryMs: 0 });
    for (let done = 0; done < RECORDS; ) {
      // The store answers after its commit: the application's transaction spans the awaits, and the
      // store's operations join it.
      db.exec('BEGIN');
      const keys: string[] = [];
      for (const end = Math.min(RECORDS, done + 10_000); done < end; done++) keys.push(key());
      await Promise.all(keys.map((k) => store.claim(k, 'token', 30_000)));
      await Promise.all(keys.map((k) => store.complete(k, 'token', RETENTION)));
      db.exec('COMMIT');
    }
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    return statSync(path).size / RECORDS;
  } finally {
    db.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  }
}

async function mysqlBytes(): Promise<number | string> {
  const unreachable = await probeTcp(MYSQL_URL, 3306);
  if (unreachable !== undefined) return `MySQL unreachable (${unreachable})`;
  const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 4 });
  const table = `hookline_disk_bytes_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  try {
    const store = mysqlStore({ client: pool, table });
    await store.setup();
    const direct = Math.min(1_000, RECORDS);
    for (let i = 0; i < direct; i++) {
      const k = key();
      await store.claim(k, 'token', 30_000);
      await store.complete(k, 'token', RETENTION);
    }
    const [[row]] = (await pool.query(`SELECT expires_at FROM \`${table}\` LIMIT 1`)) as unknown as [{ expires_at: string }[]];
    const expires = Number(row?.expires_at);
    for (let done = direct; done < RECORDS; ) {
      const rows: unknown[][] = [];
      for (const end = Math.min(RECORDS, done + 2_000); done < end; done++) rows.push([Buffer.from(key()), 'c', null, 1, expires, expires]);
      await pool.query(`INSERT INTO \`${table}\` (k, state, token, attempt, expires_at, purge_at) VALUES ?`, [rows]);
    }
    await pool.query(`ANALYZE TABLE \`${table}\``);
    const [[size]] = (await pool.query(
      'SELECT data_length + index_length AS bytes, table_rows FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?',
      [table],
    )) as unknown as [{ bytes: string }[]];
    return Number(size?.bytes) / RECORDS;
  } finally {
    await pool.query(`DROP TABLE IF EXISTS \`${table}\`, \`${table}_versions\``); // setup() creates both
    await pool.end();
  }
}

const started = performance.now();
const sqlite = await sqliteBytes();
process.stderr.write(`  SQLite done in ${Math.round((performance.now() - started) / 1000)} s\n`);
const mysqlResult = await mysqlBytes();
console.log(`records: ${RECORDS.toLocaleString('en')}`);
console.log(`SQLite store (${sqliteDriver}): ${Math.round(sqlite)} bytes per completed record (file size after a checkpoint)`);
console.log(
  typeof mysqlResult === 'string'
    ? `MySQL store: ${mysqlResult}`
    : `MySQL store: ${Math.round(mysqlResult)} bytes per completed record (InnoDB data + index length after ANALYZE TABLE)`,
);
