import type { Context, Handler } from 'hono';
import type { ReceiverEndpoint, ReceiverInput } from '@hookline/core';
import {
  type AdapterOptions,
  answerRequest,
  asNodeRequest,
  bodyAlreadyParsed,
  lingerOnRefusal,
  type NodeBodyOptions,
  type NodeRequest,
  readNodeBody,
  readRequestBody,
  routeBodyTimeoutMs,
  toResponse,
} from '@hookline/core/adapter';

const HONO_FIX =
  'Mount the webhook route before the middleware that read the body as text, JSON or form data (c.req.json(), c.req.text(), a validator…), or have that middleware read c.req.arrayBuffer() instead (decoding text strips a BOM and changes the signed bytes).';

/** Options of `webhookHandler()`: `linger` applies on @hono/node-server, where node's socket is at hand. */
export type HonoWebhookOptions = Pick<AdapterOptions, 'linger' | 'bodyTimeoutMs'>;

/** On @hono/node-server, `c.env.incoming` is node's request. */
function nodeIncoming(c: Context): NodeRequest | undefined {
  return asNodeRequest((c.env as { incoming?: unknown } | undefined)?.incoming);
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

async function readInput(receiver: ReceiverEndpoint, c: Context, bodyOptions: NodeBodyOptions): Promise<ReceiverInput> {
  const incoming = nodeIncoming(c);
  if (incoming !== undefined && untouched(incoming, c)) {
    const body = await readNodeBody(incoming, receiver.maxBodyBytes, bodyOptions);
    return { body, headers: incoming.headers, url: c.req.url };
  }
  const request = c.req.raw;
  // A middleware that read c.req.arrayBuffer() left the exact bytes in Hono's body cache: use them.
  // Any other cached form (json, text, formData) has lost them; Hono would re-serialise it, we refuse.
  const cached = c.req.bodyCache.arrayBuffer as unknown as Promise<ArrayBuffer> | undefined;
  let body: Uint8Array;
  if (cached !== undefined) {
    body = new Uint8Array(await cached); // receiver.handle() still enforces maxBodyBytes
  } else if (request.bodyUsed || Object.keys(c.req.bodyCache).length > 0) {
    throw bodyAlreadyParsed(HONO_FIX);
  } else {
    // Streams with the size and time limits: an oversized body is refused before it is buffered whole.
    body = await readRequestBody(request, receiver.maxBodyBytes, bodyOptions.timeoutMs);
  }
  return { body, headers: request.headers, url: request.url };
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
  const timeoutMs = routeBodyTimeoutMs('webhookHandler', receiver, options.bodyTimeoutMs);
  const bodyOptions: NodeBodyOptions = { fix: HONO_FIX, timeoutMs, linger };
  const read = (c: Context) => readInput(receiver, c, bodyOptions);
  return async (c) => {
    const answer = await answerRequest(receiver, c.req.method, read, c);
    // Answered before the body was read whole (405, 413, 408): on Node, read and discard the rest after
    // the answer so the client reads it instead of a reset (node's request is looked up for those only).
    if (answer.status >= 400) lingerOnRefusal(nodeIncoming(c), answer, linger);
    return toResponse(answer);
  };
}
