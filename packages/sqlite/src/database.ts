/**
 * The part of a synchronous SQLite connection the store uses: `prepare()` and `exec()`. Structural,
 * so `node:sqlite`'s `DatabaseSync`, a `better-sqlite3` or libsql `Database` and Bun's `bun:sqlite`
 * `Database` all fit without a cast.
 */
export interface SqliteDatabaseLike {
  prepare(sql: string): SqliteStatementLike;
  exec(sql: string): unknown;
}

/** A prepared statement: positional `?` parameters, `run()` for writes and `get()` for one row. */
export interface SqliteStatementLike {
  run(...params: SqliteValue[]): { changes: number | bigint };
  get(...params: SqliteValue[]): unknown;
}

/** The values the store binds: keys and tokens as text, times and counts as numbers. */
export type SqliteValue = string | number | null;

interface NodeSqliteModule {
  DatabaseSync: new (path: string) => SqliteDatabaseLike & { close(): void };
}

/**
 * `node:sqlite`, when this Node has it (22.13 and later; 22.5 to 22.12 behind
 * `--experimental-sqlite`), or undefined. Loaded only when asked for, through
 * `process.getBuiltinModule`, so the package imports on every Node >= 20.
 */
export function loadNodeSqlite(): NodeSqliteModule | undefined {
  const getBuiltinModule = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (typeof getBuiltinModule !== 'function') return undefined;
  try {
    return (getBuiltinModule('node:sqlite') as NodeSqliteModule | undefined) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Opens `filename` with node:sqlite, or says what to do instead on a Node without it. */
export function openNodeSqlite(filename: string): SqliteDatabaseLike & { close(): void } {
  const sqlite = loadNodeSqlite();
  if (sqlite === undefined) {
    throw new Error(
      `sqliteStore: this Node (${process.version}) has no node:sqlite (Node 22.13 and later have it). Pass a better-sqlite3 (or libsql) Database as \`client\` instead of \`filename\`: sqliteStore({ client: new Database('./hookline.db') }) with \`import Database from 'better-sqlite3'\`.`,
    );
  }
  return new sqlite.DatabaseSync(filename);
}
