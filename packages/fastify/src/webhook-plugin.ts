import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { HooklineError, type ReceiverEndpoint } from '@hookline/core';
import {
  type AdapterOptions,
  type LingerOptions,
  lingerOnRefusal,
  methodNotAllowed,
  type NodeBodyOptions,
  type NodeRequest,
  payloadTooLarge,
  type ReceiverAnswer,
  readNodeBody,
  routeBodyTimeoutMs,
} from '@hookline/core/adapter';

/** Options of `webhookPlugin`: hookline reads the body (the route's only parser), so `bodyTimeoutMs` applies. */
export interface FastifyWebhookOptions extends Pick<AdapterOptions, 'path' | 'linger' | 'bodyTimeoutMs'> {
  /** The receiver from `createReceiver()`. */
  receiver: ReceiverEndpoint;
  /**
   * Path of the webhook route, relative to the plugin's `prefix`.
   * @default '/webhooks'
   */
  path?: string;
}

const FASTIFY_FIX =
  'Remove the hook (onRequest/preParsing) that read the request stream from the scope of webhookPlugin, or have it return a new stream with the same bytes.';

function send(request: FastifyRequest, reply: FastifyReply, answer: ReceiverAnswer, linger: LingerOptions | undefined): FastifyReply {
  // Answered before the body was read whole: read and discard the rest after the answer.
  lingerOnRefusal(request.raw, answer, linger);
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
}

/**
 * A Fastify plugin that serves a hookline receiver at `<path>`: POST carries deliveries, every other
 * method gets 405 with `Allow: POST`. The route lives in the plugin's own encapsulated scope, whose only
 * content-type parser reads the raw bytes for every content type with the receiver's size and time
 * limits (413, 408), so the rest of your app keeps Fastify's JSON parser. Fastify's own refusals on
 * this route are answered in the receiver's error shape.
 *
 * @example
 * const app = Fastify();
 * await app.register(webhookPlugin, { receiver, path: '/webhooks' });
 */
export const webhookPlugin: FastifyPluginAsync<FastifyWebhookOptions> = async (fastify, options) => {
  const { receiver, path = '/webhooks', linger } = options;
  const limit = receiver.maxBodyBytes;
  const timeoutMs = routeBodyTimeoutMs('webhookPlugin', receiver, options.bodyTimeoutMs);
  const bodyOptions: NodeBodyOptions = { fix: FASTIFY_FIX, timeoutMs, linger };

  // Encapsulated (no fastify-plugin wrapper): this parser and these handlers apply to this route only.
  // hookline reads the body itself: the size limit while streaming (a declared Content-Length over it
  // before a byte), the body-read time limit (Fastify has none by default), a stream a hook already
  // drained refused at once rather than waited on, and a lingering close after an early answer.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_request, payload, done) => {
    // `payload` is node's request, or the stream a preParsing hook put in its place.
    readNodeBody(payload as NodeRequest, limit, bodyOptions).then((body) => done(null, body), done);
  });

  fastify.setErrorHandler((error: FastifyError, request, reply) => {
    if (HooklineError.is(error)) return send(request, reply, receiver.answerError(error), linger);
    // Fastify refused the body from its Content-Length: the receiver's 413.
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return send(request, reply, receiver.answerError(payloadTooLarge(limit)), linger);
    }
    throw error;
  });

  fastify.all(path, async (request, reply) => {
    if (request.method !== 'POST') return send(request, reply, receiver.answerError(methodNotAllowed(request.method)), linger);
    // An empty body skips the parser; the bridge reads what is there (nothing).
    const body = request.body instanceof Uint8Array ? request.body : await readNodeBody(request.raw, limit, bodyOptions);
    return send(request, reply, await receiver.handle({ body, headers: request.headers, url: request.url }), linger);
  });
};
