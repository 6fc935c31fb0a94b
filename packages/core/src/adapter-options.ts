import type { LingerOptions } from './node-linger';
import { positiveMs } from './store-checks';

/**
 * The options adapters share, each with one name and one meaning. Every adapter's options type
 * extends this interface, or the part of it that applies to its framework: `path` where the adapter
 * matches the path itself rather than a router, `linger` where it answers on node's socket, and
 * `bodyTimeoutMs` where hookline, not the framework, reads the body.
 */
export interface AdapterOptions {
  /**
   * Serve only this path (the query string is ignored).
   * @default undefined (every path that reaches the adapter)
   */
  path?: string;
  /**
   * Bounds of the lingering close after an answer given before the whole body was read (413, 408,
   * 405 to a request with a body): the rest is read and discarded so the client reads the answer
   * instead of a reset.
   * @default { maxBytes: 64 MiB, maxMs: 30_000, idleMs: 5_000 }
   */
  linger?: LingerOptions;
  /**
   * Body-read time limit for this route: past it the answer is 408 REQUEST_TIMEOUT.
   * @default the receiver's `bodyTimeoutMs`
   */
  bodyTimeoutMs?: number;
}

/**
 * A route's body-read time limit: its adapter's `bodyTimeoutMs`, checked and named after the adapter
 * (`webhookHandler: bodyTimeoutMs must be …`), or the receiver's when the route sets none.
 */
export function routeBodyTimeoutMs(
  adapter: string,
  receiver: { readonly bodyTimeoutMs: number },
  bodyTimeoutMs: number | undefined,
): number {
  return bodyTimeoutMs === undefined ? receiver.bodyTimeoutMs : positiveMs(adapter, 'bodyTimeoutMs', bodyTimeoutMs);
}
