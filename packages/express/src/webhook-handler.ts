import type { ServerResponse } from 'node:http';
import { createNodeHandler, type NodeRequest, type ReceiverEndpoint } from '@hookline/core';

const EXPRESS_FIX =
  'Mount the webhook route before app.use(express.json()) / express.text() / express.urlencoded(), or give this route express.raw({ type: "*/*" }) so the exact bytes reach hookline.';

/** An Express route handler (Express 4 and 5); typed on node's `req`/`res` so no `@types/express` is needed. */
export type ExpressWebhookHandler = (req: NodeRequest, res: ServerResponse, next?: (error?: unknown) => void) => Promise<void>;

/**
 * An Express route handler that serves a hookline receiver. It streams the raw body with the
 * receiver's size limit (413 before buffering it all), or takes the `Buffer` that `express.raw()`
 * left in `req.body`. When a JSON/text/urlencoded parser already consumed the body it answers 500
 * `CONFIGURATION_ERROR` at once, naming the fix, instead of waiting on a stream that has ended.
 *
 * @example
 * const app = express();
 * app.post('/webhooks', webhookHandler(receiver)); // before app.use(express.json())
 * app.use(express.json());
 */
export function webhookHandler(receiver: ReceiverEndpoint): ExpressWebhookHandler {
  // The route decides the path and method; the core bridge does the rest.
  return createNodeHandler(receiver, { parsedBodyFix: EXPRESS_FIX });
}
