import { connect } from 'node:net';

/** What `requireServer` found. */
export type ServerReachability = { reachable: true } | { reachable: false; reason: string };

/** Options of `requireServer()`. */
export interface RequireServerOptions {
  /**
   * The port used when the URL names none (6379 for `redis:`, 5432 for `postgres:`).
   * @default the scheme's usual port
   */
  defaultPort?: number;
  /**
   * How long to wait for the TCP connection.
   * @default 1_500
   */
  timeoutMs?: number;
  /**
   * Whether an unreachable server fails instead of skipping.
   * @default process.env.CI === 'true'
   */
  required?: boolean;
}

const USUAL_PORTS: Record<string, number> = { 'redis:': 6379, 'rediss:': 6379, 'postgres:': 5432, 'postgresql:': 5432 };

/** Opens (and closes) a TCP connection to the URL's host and port; resolves why it failed, or undefined. */
export function probeTcp(url: string, defaultPort?: number, timeoutMs = 1_500): Promise<string | undefined> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return Promise.resolve(`${url} is not a URL`);
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(parsed.port || defaultPort || USUAL_PORTS[parsed.protocol] || 0);
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (reason: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(() => done(`no answer from ${host}:${port} within ${timeoutMs} ms`), timeoutMs);
    socket.once('connect', () => done(undefined));
    socket.once('error', (error) => done(`${host}:${port}: ${error.message}`));
  });
}

/**
 * The reachability rule of hookline's real-server tests: an unreachable server is a loud skip on a
 * developer's machine (a `console.warn` with the reason) and a failure when `CI=true`, so CI can never
 * go green by skipping. Call it at the top of a test file and skip with `describe.skipIf(!r.reachable)`.
 *
 * @example
 * const redis = await requireServer('Redis', process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
 * describe.skipIf(!redis.reachable)('redis store', () => { ... });
 */
export async function requireServer(name: string, url: string, options: RequireServerOptions = {}): Promise<ServerReachability> {
  const reason = await probeTcp(url, options.defaultPort, options.timeoutMs);
  if (reason === undefined) return { reachable: true };
  const required = options.required ?? process.env.CI === 'true';
  const message = `${name} at ${redactUrl(url)} is unreachable (${reason})`;
  if (required) throw new Error(`${message}; CI=true, so this is a failure, not a skip`);
  console.warn(`\n⚠️  SKIPPING ${name} tests: ${message}. Start it or set the URL to run them.\n`);
  return { reachable: false, reason };
}

/** Hides a password in a connection URL before it is printed. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
