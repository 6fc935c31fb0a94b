import type { Context, Handler } from 'hono';
import type { ReceiverEndpoint } from '@hookline/core';
import { bodyAlreadyParsed, type NodeRequest, type ReceiverAnswer, readNodeBody, readRequestBody } from '@hookline/core/adapter';

const HONO_FIX =
  'A middleware read it as text, JSON or form data (c.req.json(), c.req.text(), a validator…): mount the webhook route before that middleware, or read c.req.arrayBuffer() there instead (decoding text strips a BOM and changes the signed bytes).';

function toResponse({ status, headers, body }: ReceiverAnswer): Response {
  return new Response(body, { status, headers });
}

/**
 * On @hono/node-server, `c.env.incoming` is node's request. While nothing has started reading it, the
 * bytes and node's header record are taken from it directly: the Web `Request`, its stream and its
 * `Headers` are then never built, which is most of the cost of a small delivery on Node.
 */
function untouchedIncoming(c: Context): NodeRequest | undefined {
  const incoming = (c.env as { incoming?: Partial<NodeRequest> } | undefined)?.incoming;
  if (incoming === undefined || typeof incoming.on !== 'function' || typeof incoming.headers !== 'object') return undefined;
  // readableFlowing stays null until something reads the stream (a Request body made from it would).
  if (incoming.readableFlowing !== null || incoming.readableEnded || Object.keys(c.req.bodyCache).length > 0) return undefined;
  return incoming as NodeRequest;
}

async function answer(receiver: ReceiverEndpoint, c: Context): Promise<ReceiverAnswer> {
  const incoming = untouchedIncoming(c);
  if (incoming !== undefined) {
    const body = await readNodeBody(incoming, receiver.maxBodyBytes, HONO_FIX);
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
    // Streams with the size limit: an oversized body is refused before it is buffered whole.
    body = await readRequestBody(request, receiver.maxBodyBytes);
  }
  return receiver.handle({ body, headers: request.headers, url: request.url });
}

/**
 * A Hono handler that serves a hookline receiver on any runtime Hono runs on (Node, Bun, Deno,
 * Workers). It reads the body as bytes, never as text first: `text()` strips a BOM and breaks the
 * signature.
 *
 * @example
 * const app = new Hono();
 * app.post('/webhooks', webhookHandler(receiver));
 */
export function webhookHandler(receiver: ReceiverEndpoint): Handler {
  return async (c) => {
    if (c.req.method !== 'POST') return receiver.fetch(c.req.raw);
    try {
      return toResponse(await answer(receiver, c));
    } catch (error) {
      return toResponse(receiver.answerError(error));
    }
  };
}
