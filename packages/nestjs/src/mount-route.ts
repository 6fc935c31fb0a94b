import { createNodeHandler, type NodeRequest } from '@hookline/core';
import { routeBodyTimeoutMs } from '@hookline/core/adapter';
import type { ServerResponse } from 'node:http';
import type { HooklineModuleOptions } from './options';

// Each platform's own way of losing the bytes, and its fix.
const EXPRESS_FIX =
  "A body parser read the request before hookline's route (an express.json() on the Express instance given to Nest, or a late route behind Nest's parser): create the app with { rawBody: true } (NestFactory.create(AppModule, { rawBody: true })) so the exact bytes are kept in req.rawBody, or mount that parser after Nest has created the app.";
const FASTIFY_FIX =
  "An onRequest hook or a Nest middleware read the request stream before hookline's route: leave the webhook path out of it (consumer.apply(...).exclude(path)), or have it read request.raw only for other paths.";

type NodeListener = (req: NodeRequest, res: ServerResponse) => unknown;

/** The parts of an Express app and a Fastify instance the route needs (no types from either). */
interface ExpressLike {
  all(path: string, handler: NodeListener): unknown;
}
interface FastifyLike {
  route(options: {
    method: string[];
    url: string;
    onRequest: (request: { raw: NodeRequest }, reply: { raw: ServerResponse; hijack(): void }, done: () => void) => void;
    handler: () => void;
  }): unknown;
}

/** The HTTP adapter as `HttpAdapterHost` exposes it. */
export interface HttpAdapterLike {
  getType(): string;
  getInstance(): unknown;
}

const METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];

/**
 * Serves the receiver on the platform's own instance, through the core's node:http bridge, ahead of
 * Nest's body parsers. Express: a route registered as soon as the adapter exists, which is before
 * `app.init()` adds the JSON parser. Fastify: a route whose `onRequest` hook hands node's untouched
 * request to the bridge and hijacks the reply, so no content-type parser ever reads the body.
 *
 * Not `@hookline/fastify`'s plugin, on purpose: the plugin reads the body in a content-type parser
 * and answers through Fastify's reply (so a Fastify app's onSend hooks see the answer). The hijacked
 * bridge is the faster path: under Nest it served 23.5k requests/s where the plugin on bare Fastify
 * served 21.7k (bench/RESULTS.md). And a failure no answer can be written for closes the connection
 * here, where the plugin's route would hand it to Fastify's error handler (a 500).
 */
export function mountRoute(adapter: HttpAdapterLike, options: HooklineModuleOptions): void {
  const { receiver, path = '/webhooks', linger } = options;
  const bodyTimeoutMs = routeBodyTimeoutMs('HooklineModule', receiver, options.bodyTimeoutMs);
  if (adapter.getType() === 'fastify') {
    const bridge = createNodeHandler(receiver, { parsedBodyFix: FASTIFY_FIX, linger, bodyTimeoutMs });
    (adapter.getInstance() as FastifyLike).route({
      method: METHODS,
      url: path,
      // A callback hook that never calls `done`: once hijacked the reply is the bridge's, and Fastify
      // has nothing left to run. An async hook made Fastify chain a promise per request only to stop.
      onRequest: (request, reply) => {
        reply.hijack();
        bridge(request.raw, reply.raw).catch(() => {
          // The bridge answers every refusal itself; a failure here means no answer can be written.
          reply.raw.destroy();
        });
      },
      handler: () => {},
    });
    return;
  }
  // Every method reaches the bridge, which answers 405 to all but POST.
  (adapter.getInstance() as ExpressLike).all(path, createNodeHandler(receiver, { parsedBodyFix: EXPRESS_FIX, linger, bodyTimeoutMs }));
}
