import type { ServerResponse } from 'node:http';
import { createNodeHandler, type NodeRequest, type ReceiverEndpoint } from '@hookline/core';
import { type AdapterOptions, routeBodyTimeoutMs, serveRequest } from '@hookline/core/adapter';

/** Options of `webhookRoute()`: the route file decides the path, and no node socket is at hand to linger on. */
export type WebhookRouteOptions = Pick<AdapterOptions, 'bodyTimeoutMs'>;

/**
 * An App Router route handler for `app/…/route.ts`. Reads the `Request` body once, as bytes, with the
 * receiver's size and time limits (413, 408). Works on the Node.js and the Edge runtime, and for every
 * method: export it under each name so that hookline, not Next, answers the other methods (405 with
 * `Allow: POST` and the JSON error body; Next's own 405 has neither).
 *
 * @example
 * // app/webhooks/route.ts
 * import { webhookRoute } from '@hookline/next';
 * import { receiver } from '@/lib/receiver';
 * const route = webhookRoute(receiver);
 * export { route as POST, route as GET, route as HEAD, route as PUT, route as PATCH, route as DELETE, route as OPTIONS };
 */
export function webhookRoute(receiver: ReceiverEndpoint, options: WebhookRouteOptions = {}): (request: Request) => Promise<Response> {
  const bodyTimeoutMs = routeBodyTimeoutMs('webhookRoute', receiver, options.bodyTimeoutMs);
  return (request) => serveRequest(receiver, request, bodyTimeoutMs);
}

/**
 * The `config` a Pages Router API route needs: Next's body parser off, so hookline sees the raw
 * bytes. Next reads `config` statically, so write the literal in your route file (shown below) rather
 * than re-exporting this constant; it is here to be compared against and documented.
 *
 * @example
 * export const config = { api: { bodyParser: false } };
 */
export const pagesApiConfig = { api: { bodyParser: false } } as const;

const PAGES_FIX =
  'Add `export const config = { api: { bodyParser: false } };` to this API route file (pages/api/…) so the exact bytes reach hookline.';

/** A Pages Router API route handler (node's `req`/`res`, which `NextApiRequest`/`NextApiResponse` extend). */
export type PagesApiHandler = (req: NodeRequest, res: ServerResponse) => Promise<void>;

/** Options of `webhookApiRoute()`. */
export type PagesApiRouteOptions = Pick<AdapterOptions, 'linger' | 'bodyTimeoutMs'>;

/**
 * A Pages Router API route: `export default webhookApiRoute(receiver)` in `pages/api/…`, together with
 * `export const config = { api: { bodyParser: false } }`. If the body parser was left on, every
 * delivery is answered 500 `CONFIGURATION_ERROR` with that fix in the message. Other methods than
 * POST get 405 with `Allow: POST`.
 *
 * @example
 * // pages/api/webhooks.ts
 * import { webhookApiRoute } from '@hookline/next';
 * import { receiver } from '@/lib/receiver';
 * export const config = { api: { bodyParser: false } };
 * export default webhookApiRoute(receiver);
 */
export function webhookApiRoute(receiver: ReceiverEndpoint, options: PagesApiRouteOptions = {}): PagesApiHandler {
  const bodyTimeoutMs = routeBodyTimeoutMs('webhookApiRoute', receiver, options.bodyTimeoutMs);
  const handler = createNodeHandler(receiver, { parsedBodyFix: PAGES_FIX, linger: options.linger, bodyTimeoutMs });
  return (req, res) => handler(req, res);
}
