import type { IncomingMessage, ServerResponse } from 'node:http';
import { createNodeHandler, type NodeRequest, type ReceiverEndpoint } from '@hookline/core';
import { type AdapterOptions, routeBodyTimeoutMs } from '@hookline/core/adapter';

const KOA_FIX =
  'A body parser (koa-bodyparser, @koa/bodyparser, koa-body) read the request before hookline did: add the webhook middleware before app.use(bodyParser()), or set ctx.disableBodyParser = true for its path, so the exact bytes reach hookline.';

/** The part of Koa's context the middleware uses (Koa 2 and 3 alike), so no `@types/koa` is needed. */
export interface KoaContextLike {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  respond?: boolean;
  request: { body?: unknown };
}

/** A Koa middleware (Koa 2 and 3, and @koa/router routes). */
export type KoaWebhookMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<void>;

/**
 * Options of `webhookMiddleware()`: with `path`, other requests go on to `next()`. Leave it out under
 * a router (`router.post('/webhooks', …)`), which matches the path itself.
 */
export type KoaWebhookOptions = Pick<AdapterOptions, 'path' | 'linger' | 'bodyTimeoutMs'>;

/**
 * A Koa middleware that serves a hookline receiver through the core's node:http bridge: it streams
 * `ctx.req` with the receiver's size limit and writes the answer on `ctx.res` (`ctx.respond = false`,
 * so Koa leaves the response alone; `ctx.status` still reads the status sent). A `Buffer` a raw
 * parser left in `ctx.request.body` is used as is; a body a JSON/text/form parser already consumed is
 * answered 500 `CONFIGURATION_ERROR` at once, naming the fix, never a wait on an ended stream.
 *
 * @example
 * app.use(webhookMiddleware(receiver, { path: '/webhooks' })); // before app.use(bodyParser())
 * router.post('/webhooks', webhookMiddleware(receiver));       // or as a @koa/router route
 */
export function webhookMiddleware(receiver: ReceiverEndpoint, options: KoaWebhookOptions = {}): KoaWebhookMiddleware {
  const { path, linger } = options;
  const bodyTimeoutMs = routeBodyTimeoutMs('webhookMiddleware', receiver, options.bodyTimeoutMs);
  const bridge = createNodeHandler(receiver, { parsedBodyFix: KOA_FIX, linger, bodyTimeoutMs });
  return async (ctx, next) => {
    if (path !== undefined && ctx.path !== path) {
      await next();
      return;
    }
    const req: NodeRequest = ctx.req;
    // A raw parser's Buffer lives on Koa's request, not node's: hand it to the bridge where it looks.
    const parsed = ctx.request.body;
    if (parsed instanceof Uint8Array && req.body === undefined) req.body = parsed;
    ctx.respond = false;
    await bridge(req, ctx.res);
  };
}
