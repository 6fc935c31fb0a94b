import type { ServerResponse } from 'node:http';
import { createNodeHandler, type NodeRequest, type ReceiverEndpoint } from '@hookline/core';
import { type AdapterOptions, routeBodyTimeoutMs } from '@hookline/core/adapter';

/**
 * The recommended raw parser, for when one must sit in front of the route: it keeps the bytes as sent.
 * A `limit` of the receiver's maxBodyBytes (express.raw's own default is 100 kB); bodies with a
 * Content-Encoding left to hookline's stream reader instead of inflated (the signature covers the bytes
 * as sent), and `inflate: false` so that no later edit of `type` can bring inflation back.
 */
const EXPRESS_FIX =
  "Mount the webhook route before app.use(express.json()) / express.text() / express.urlencoded(), or give this route a raw parser that keeps the bytes as sent: express.raw({ type: (req) => !req.headers['content-encoding'], limit: receiver.maxBodyBytes, inflate: false }).";

/** Options of `webhookHandler()`: the route (`app.all('/webhooks', …)`) decides the path. */
export type ExpressWebhookOptions = Pick<AdapterOptions, 'linger' | 'bodyTimeoutMs'>;

/** An Express route handler (Express 4 and 5); typed on node's `req`/`res` so no `@types/express` is needed. */
export type ExpressWebhookHandler = (req: NodeRequest, res: ServerResponse, next?: (error?: unknown) => void) => Promise<void>;

/**
 * An Express route handler that serves a hookline receiver. It streams the raw body with the
 * receiver's size and time limits (413 before buffering it all, 408 for a body that stalls), or takes
 * the `Buffer` that `express.raw()` left in `req.body`. When a JSON/text/urlencoded parser already
 * consumed the body it answers 500 `CONFIGURATION_ERROR` at once, naming the fix, instead of waiting on
 * a stream that has ended. Mounted with `app.all`, it answers other methods 405 with `Allow: POST`.
 *
 * @example
 * const app = express();
 * app.all('/webhooks', webhookHandler(receiver)); // before app.use(express.json())
 * app.use(express.json());
 */
export function webhookHandler(receiver: ReceiverEndpoint, options: ExpressWebhookOptions = {}): ExpressWebhookHandler {
  // The route decides the path; the core bridge does the rest (405 for anything but POST).
  const bodyTimeoutMs = routeBodyTimeoutMs('webhookHandler', receiver, options.bodyTimeoutMs);
  return createNodeHandler(receiver, { parsedBodyFix: EXPRESS_FIX, linger: options.linger, bodyTimeoutMs });
}
