// The reachability rule for every real-server test in test/: loud skip on a developer's machine,
// failure when CI=true. The rule itself ships in @hookline/testing so store authors can use it too.
import { requireServer } from '@hookline/testing';

/** Where the shared Redis is (never stop or reconfigure it: tests that kill one start their own). */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Where the shared PostgreSQL is. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Probes the shared Redis once per test file. */
export const requireRedis = () => requireServer('Redis', REDIS_URL);
/** Probes the shared PostgreSQL once per test file. */
export const requirePostgres = () => requireServer('PostgreSQL', DATABASE_URL);

export { requireServer };
