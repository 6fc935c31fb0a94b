import type { Context, Handler } from 'hono';
import type { ReceiverEndpoint } from '@hookline/core';
import {
  bodyAlreadyParsed,
  type LingerOptions,
  lingerAfterAnswer,
  methodNotAllowed,
  type NodeBodyOptions,
  type NodeRequest,
  type ReceiverAnswer,
  readNodeBody,
  readRequestBody,
} from '@hookline/core/adapter';

const HONO_FIX =
  'Mount the webhook route before the middleware that read the body as text, JSON or form data (c.req.json(), c.req.text(), a validator…), or have that middleware read c.req.arrayBuffer() instead (decoding text strips a BOM and changes the signed bytes).';

/** Options of `webhookHandler()`. */
export interface HonoWebhookOptions {
  /**
   * On @hono/node-server: bounds of the lingering close after an answer given before the whole body
   * was read (413, 408, 405 to a request with a body): the rest is read and discarded so the client
   * reads the answer instead of a reset.
   * @default { maxBytes: 64 MiB, maxMs: 30_000, idleMs: 5_000 }
   */
  linger?: LingerOptions;
}

function toResponse({ status, headers, body }: ReceiverAnswer): Response {
  return new Response(body, { status, headers });
}

/** On @hono/node-server, `c.env.incoming` is node's request. */
function nodeIncoming(c: Context): NodeRequest | undefined {
  const incoming = (c.env as { incoming?: Partial<NodeRequest> } | undefined)?.incoming;
  if (incoming === undefined || typeof incoming.on !== 'function' || typeof incoming.headers !== 'object') return undefined;
  return incoming as NodeRequest;
}

/**
 * While nothing has started reading node's request, the bytes and node's header record are taken from
 * it directly: the Web `Request`, its stream and its `Headers` are then never built, which is most of
 * the cost of a small delivery on Node.
 */
function untouched(incoming: NodeRequest, c: Context): boolean {
  // readableFlowing stays null until something reads the stream (a Request body made from it would).
  return incoming.readableFlowing === null && !incoming.readableEnded && Object.keys(c.req.bodyCache).length === 0;
}

async function answer(receiver: ReceiverEndpoint, c: Context, bodyOptions: NodeBodyOptions): Promise<ReceiverAnswer> {
  const incoming = nodeIncoming(c);
  if (incoming !== undefined && untouched(incoming, c)) {
    const body = await readNodeBody(incoming, receiver.maxBodyBytes, bodyOptions);
    return receiver.handle({ body, headers: incoming.headers, url: c.req.url });
  }
  const request = c.req.raw;
  // A middleware that read c.req.arrayBuffer() left the exact bytes in Hono's body cache: use them.
  // Any other cached form (json, text, formData) has lost them; Hono would re-serialise it, we refuse.
  const cached = c.req.bodyCache.arrayBuffer as unknown as Promise<ArrayBuffer> | undefined;
  let body: Uint8Array;
  if (cached !== undefined) {
    body = new Uint8Array(await cached); // receiver.handle() still enforces maxBodyBytes
  } else if (request.bodyUsed || Object.keys(c.req.bodyCache).length > 0) {
    return receiver.answerError(bodyAlreadyParsed(HONO_FIX));
  } else {
    // Streams with the size and time limits: an oversized body is refused before it is buffered whole.
    body = await readRequestBody(request, receiver.maxBodyBytes, receiver.bodyTimeoutMs);
  }
  return receiver.handle({ body, headers: request.headers, url: request.url });
}

/**
 * A Hono handler that serves a hookline receiver on any runtime Hono runs on (Node, Bun, Deno,
 * Workers). It reads the body as bytes, never as text first (`text()` strips a BOM and breaks the
 * signature), with the receiver's size and time limits (413, 408). Mounted with `app.all`, it answers
 * other methods 405 with `Allow: POST`.
 *
 * @example
 * const app = new Hono();
 * app.all('/webhooks', webhookHandler(receiver));
 */
export function webhookHandler(receiver: ReceiverEndpoint, options: HonoWebhookOptions = {}): Handler {
  const { linger } = options;
  const bodyOptions: NodeBodyOptions = { fix: HONO_FIX, timeoutMs: receiver.bodyTimeoutMs, linger };
  return async (c) => {
    let result: ReceiverAnswer;
    if (c.req.method !== 'POST') {
      result = receiver.answerError(methodNotAllowed(c.req.method));
    } else {
      try {
        result = await answer(receiver, c, bodyOptions);
      } catch (error) {
        result = receiver.answerError(error);
      }
    }
    // Answered before the body was read whole (405, 413, 408): on Node, read and discard the rest after
    // the answer so the client reads it instead of a reset (a no-op when the body was read).
    if (result.status >= 400) {
      const incoming = nodeIncoming(c);
      if (incoming !== undefined && lingerAfterAnswer(incoming, linger)) result.headers.connection = 'close';
    }
    return toResponse(result);
  };
}
