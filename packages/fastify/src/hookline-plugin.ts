import type { FastifyError, FastifyPluginAsync, FastifyReply } from 'fastify';
import { HooklineError, type ReceiverEndpoint } from '@hookline/core';
import { payloadTooLarge, readNodeBody, type ReceiverAnswer } from '@hookline/core/adapter';

/** Options of `hooklinePlugin`. */
export interface HooklinePluginOptions {
  /** The receiver from `createReceiver()`. */
  receiver: ReceiverEndpoint;
  /**
   * Path of the webhook route, relative to the plugin's `prefix`.
   * @default '/webhooks'
   */
  path?: string;
}

const FASTIFY_FIX =
  'A hook (onRequest/preParsing) read the request stream before hookline did. Remove it from the scope of hooklinePlugin, or have it return a new stream with the same bytes.';

function send(reply: FastifyReply, answer: ReceiverAnswer): FastifyReply {
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
}

/**
 * A Fastify plugin that registers `POST <path>` for a hookline receiver. The route lives in the
 * plugin's own encapsulated scope, whose only content-type parser keeps the raw bytes for every
 * content type (Fastify's `bodyLimit` set to the receiver's `maxBodyBytes`), so the rest of your app
 * keeps Fastify's JSON parser. Fastify's 413 and configuration errors are answered in the receiver's
 * error shape.
 *
 * @example
 * const app = Fastify();
 * await app.register(hooklinePlugin, { receiver, path: '/webhooks' });
 */
export const hooklinePlugin: FastifyPluginAsync<HooklinePluginOptions> = async (fastify, options) => {
  const { receiver, path = '/webhooks' } = options;
  const limit = receiver.maxBodyBytes;

  // Encapsulated (no fastify-plugin wrapper): these parsers and handlers apply to this route only.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limit }, (_request, body, done) => done(null, body));

  // Fastify's reader would wait forever on a stream a hook already drained: refuse it at once.
  fastify.addHook('preParsing', async (request, _reply, payload) => {
    if (request.raw.readableEnded) await readNodeBody(request.raw, limit, FASTIFY_FIX);
    return payload;
  });

  fastify.setErrorHandler((error: FastifyError, _request, reply) => {
    if (HooklineError.is(error)) return send(reply, receiver.answerError(error));
    // Fastify refused the body while streaming it (or from its Content-Length): the receiver's 413.
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return send(reply, receiver.answerError(payloadTooLarge(limit)));
    }
    throw error;
  });

  fastify.post(path, async (request, reply) => {
    // An empty body skips the parser; the bridge reads what is there (nothing).
    const body = request.body instanceof Uint8Array ? request.body : await readNodeBody(request.raw, limit, FASTIFY_FIX);
    return send(reply, await receiver.handle({ body, headers: request.headers, url: request.url }));
  });
};
