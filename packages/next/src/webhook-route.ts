import type { ServerResponse } from 'node:http';
import { createNodeHandler, type NodeRequest, type ReceiverEndpoint } from '@hookline/core';

/**
 * An App Router route handler: `export const POST = webhookRoute(receiver)` in `app/…/route.ts`.
 * Reads the `Request` body once, as bytes, with the receiver's size limit. Works on the Node.js and
 * the Edge runtime.
 *
 * @example
 * // app/webhooks/route.ts
 * import { webhookRoute } from '@hookline/next';
 * import { receiver } from '@/lib/receiver';
 * export const POST = webhookRoute(receiver);
 */
export function webhookRoute(receiver: ReceiverEndpoint): (request: Request) => Promise<Response> {
  return (request) => receiver.fetch(request);
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
  'Next.js parsed it: add `export const config = { api: { bodyParser: false } };` to this API route file (pages/api/…) so the exact bytes reach hookline.';

/** A Pages Router API route handler (node's `req`/`res`, which `NextApiRequest`/`NextApiResponse` extend). */
export type PagesApiHandler = (req: NodeRequest, res: ServerResponse) => Promise<void>;

/**
 * A Pages Router API route: `export default webhookApiRoute(receiver)` in `pages/api/…`, together with
 * `export const config = { api: { bodyParser: false } }`. If the body parser was left on, every
 * delivery is answered 500 `CONFIGURATION_ERROR` with that fix in the message.
 *
 * @example
 * // pages/api/webhooks.ts
 * import { webhookApiRoute } from '@hookline/next';
 * import { receiver } from '@/lib/receiver';
 * export const config = { api: { bodyParser: false } };
 * export default webhookApiRoute(receiver);
 */
export function webhookApiRoute(receiver: ReceiverEndpoint): PagesApiHandler {
  const handler = createNodeHandler(receiver, { parsedBodyFix: PAGES_FIX });
  return (req, res) => handler(req, res);
}
