// The servers the store quick starts run against: a database of their own on the shared PostgreSQL
// and MariaDB/MySQL (made for the run and dropped after it, so the tables the snippets create under
// their default names meet nothing else), and dynalite for DynamoDB.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { AddressInfo, Server } from 'node:net';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { ROOT } from '../../scripts/pack-packages.mjs';
import { DATABASE_URL } from '../support/servers';

export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/** A database server the test can make databases on. */
export interface DatabaseServer {
  /** The server's URL with the database `name` in place of its own. */
  urlOf(name: string): string;
  run(sql: string): Promise<void>;
  quote(name: string): string;
  /** What DROP DATABASE needs to end the connections a stopped app may still hold. */
  dropForce: string;
}

const withPath = (url: string, name: string) => {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
};

export const postgresServer: DatabaseServer = {
  urlOf: (name) => withPath(DATABASE_URL, name),
  async run(sql) {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  },
  quote: (name) => `"${name}"`,
  dropForce: ' WITH (FORCE)',
};

export const mysqlServer: DatabaseServer = {
  urlOf: (name) => withPath(MYSQL_URL, name),
  async run(sql) {
    const connection = await mysql.createConnection({ uri: MYSQL_URL });
    try {
      await connection.query(sql);
    } finally {
      await connection.end();
    }
  },
  quote: (name) => `\`${name}\``,
  dropForce: '',
};

/** Runs `use` with the URL of a database made for it on `server`, dropped afterwards. */
export async function withDatabase(server: DatabaseServer, use: (url: string) => Promise<void>): Promise<void> {
  const name = `hookline_quick_start_${randomBytes(6).toString('hex')}`;
  await server.run(`CREATE DATABASE ${server.quote(name)}`);
  try {
    await use(server.urlOf(name));
  } finally {
    await server.run(`DROP DATABASE IF EXISTS ${server.quote(name)}${server.dropForce}`);
  }
}

/** dynalite (a DynamoDB implementation, a devDependency of packages/dynamodb) on a port of this process. */
export async function startDynalite(): Promise<{ url: string; close(): Promise<void> }> {
  const dynalite = createRequire(join(ROOT, 'packages', 'dynamodb', 'package.json'))('dynalite') as (options: object) => Server;
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
