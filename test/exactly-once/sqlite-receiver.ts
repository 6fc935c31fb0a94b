// One receiver process of the SQLite exactly-once test: the SQLite store on SQLITE_FILE, shared with
// the other processes, through node:sqlite where this Node has it and better-sqlite3 otherwise.
import { createRequire } from 'node:module';
import { type SqliteDatabaseLike, sqliteStore } from '@hookline/sqlite';
import { env, serveReceiver } from './sqlite-harness';

const file = env('SQLITE_FILE');
const getBuiltinModule = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
const nodeSqlite = getBuiltinModule?.('node:sqlite') as { DatabaseSync: new (path: string) => SqliteDatabaseLike } | undefined;
const database = nodeSqlite
  ? new nodeSqlite.DatabaseSync(file)
  : new (createRequire(import.meta.url)('better-sqlite3') as new (path: string) => SqliteDatabaseLike)(file);
serveReceiver(sqliteStore({ client: database }));
