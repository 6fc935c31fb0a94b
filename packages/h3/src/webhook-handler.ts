import type { IncomingMessage, ServerResponse } from 'node:http';
import { createNodeHandler, HooklineError, type ReceiverEndpoint } from '@hookline/core';
import {
  type AdapterOptions,
  asNodeRequest,
  bodyAlreadyParsed,
  lingerOnRefusal,
  methodNotAllowed,
  type NodeBodyOptions,
  type NodeRequest,
  type ReceiverAnswer,
  readNodeBody,
  readRequestBody,
  routeBodyTimeoutMs,
} from '@hookline/core/adapter';

const H3_FIX =
  "Something read the body as text, JSON or form data before hookline did (h3 v2's readBody(), readValidatedBody() or event.req.json(), or a Node body parser in front of h3): mount the webhook route before that middleware (on h3 v1, readBody() keeps the raw bytes, so it may run first).";

type NodeBridge = ReturnType<typeof createNodeHandler>;

/** Where h3 v1's readBody()/readRawBody() keep the raw bytes they read (`Symbol.for`, shared with h3). */
const H3_V1_RAW_BODY = Symbol.for('h3RawBody');

/** Options of `webhookHandler()`: `linger` applies on Node (h3 v1, and h3 v2 served by node:http). */
export type H3WebhookOptions = Pick<AdapterOptions, 'linger' | 'bodyTimeoutMs'>;

/** The parts of an h3 v1 event the handler uses (`event.node`). */
interface H3V1EventLike {
  node: { req: IncomingMessage; res: ServerResponse };
}

/**
 * The parts of an h3 v2 event the handler uses (`event.req` is a Web `Request`; `event.runtime.node`
 * holds node's request when node:http serves it).
 */
interface H3V2EventLike {
  req: Request;
  res: { status?: number; headers: Headers };
  runtime?: { node?: { req?: unknown } };
}

/** An h3 v1 or v2 event, structurally, so neither major's types are needed. */
export type H3EventLike = H3V1EventLike | H3V2EventLike;

/** An h3 event handler for v1 and v2 (`__is_handler__` is what v1's `defineEventHandler` sets). */
export type H3WebhookHandler = ((event: H3EventLike) => Promise<string | undefined>) & { __is_handler__: true };

function isV2(event: H3EventLike): event is H3V2EventLike {
  return typeof (event as Partial<H3V2EventLike>).req?.arrayBuffer === 'function';
}

/** h3 v2 served by node:http (srvx): node's request behind `event.req`. */
function nodeIncoming(event: H3V2EventLike): NodeRequest | undefined {
  return asNodeRequest(event.runtime?.node?.req);
}

/**
 * Whether node's request is to be read as node's: nothing opened the Web `Request`'s stream over it
 * (which would take the bytes), or a Node middleware already consumed it, leaving a raw parser's
 * Buffer or a parse that `readNodeBody` recognises (the configuration error, naming the fix).
 */
function readAsNode(incoming: NodeRequest): boolean {
  return incoming.readableFlowing === null || incoming.readableEnded;
}

/**
 * h3 v2: the bytes of the request. Served by node:http, node's request is read as the core bridge
 * reads it: the receiver's size and time limits, and a lingering close after a 413 or 408. (Refused
 * through the Web stream, the read would cancel that stream, which destroys node's request: nothing
 * could then read and discard the rest of the body, and a client still sending would meet a reset
 * instead of the answer.) Elsewhere (Bun, Deno, Workers, `app.fetch()`), or once something opened the
 * Web request's stream over node's request (h3's `bodyLimit()` does), `event.req` is read as h3 reads
 * it, streamed with the same limits.
 */
async function answerV2(receiver: ReceiverEndpoint, event: H3V2EventLike, bodyOptions: NodeBodyOptions): Promise<ReceiverAnswer> {
  const request = event.req;
  if (request.method !== 'POST') return receiver.answerError(methodNotAllowed(request.method));
  if (request.bodyUsed) return receiver.answerError(bodyAlreadyParsed(H3_FIX));
  const incoming = nodeIncoming(event);
  const body =
    incoming !== undefined && readAsNode(incoming)
      ? await readNodeBody(incoming, receiver.maxBodyBytes, bodyOptions)
      : await readRequestBody(request, receiver.maxBodyBytes, bodyOptions.timeoutMs);
  return receiver.handle({ body, headers: request.headers, url: request.url });
}

/**
 * h3 v1: node's request through the core bridge. Bytes h3's readBody()/readRawBody() already read
 * (it reads the raw bytes first and keeps them, even for a JSON parse) are handed over as
 * `req.rawBody`, where the bridge takes a raw parser's Buffer; h3 reads that field the same way.
 * Without them (the common case) the bridge's own promise is returned as is: no async wrapper, whose
 * extra promises cost a measurable share of a request this small.
 */
function serveV1(bridge: NodeBridge, req: NodeRequest & { [H3_V1_RAW_BODY]?: unknown }, res: ServerResponse): Promise<void> {
  const cached = req[H3_V1_RAW_BODY];
  if (cached === undefined || req.rawBody !== undefined) return bridge(req, res);
  return Promise.resolve(cached).then((bytes) => {
    if (bytes instanceof Uint8Array) req.rawBody = bytes;
    return bridge(req, res);
  });
}

/**
 * An h3 event handler that serves a hookline receiver, on h3 v1 (Nuxt 3/4 server routes, Nitro 2)
 * and h3 v2 (Nitro 3, `H3` apps). It streams the body with the receiver's size and time limits (413
 * before an oversized body is buffered, 408 for one that has not arrived whole within
 * `bodyTimeoutMs`): node's request through the core bridge on v1 and on v2 served by node:http, with a
 * lingering close after such an answer; h3's Web request elsewhere. Bytes h3 v1 already read (a
 * middleware called `readBody`) are taken from h3's cache; a body h3 v2 already decoded is answered
 * 500 `CONFIGURATION_ERROR`, naming the fix.
 *
 * @example
 * // server/api/webhooks.post.ts (Nuxt)
 * export default webhookHandler(receiver);
 * // h3 v2
 * app.post('/webhooks', webhookHandler(receiver));
 */
export function webhookHandler(receiver: ReceiverEndpoint, options: H3WebhookOptions = {}): H3WebhookHandler {
  const { linger } = options;
  const timeoutMs = routeBodyTimeoutMs('webhookHandler', receiver, options.bodyTimeoutMs);
  const bridge = createNodeHandler(receiver, { parsedBodyFix: H3_FIX, linger, bodyTimeoutMs: timeoutMs });
  const bodyOptions: NodeBodyOptions = { fix: H3_FIX, timeoutMs, linger };
  const handler = (event: H3EventLike): Promise<string | undefined> => {
    // h3 v2's event.req is a Web Request (v2 also has a `node` alias, so that cannot tell them apart).
    // On v1 the answer is written on node's response: h3 sees the event handled and adds nothing.
    // The bridge's promise resolves to undefined once the answer is written, as h3 v1 expects.
    if (!isV2(event)) return serveV1(bridge, event.node.req, event.node.res) as Promise<undefined>;
    return serveV2(receiver, event, bodyOptions);
  };
  return Object.assign(handler, { __is_handler__: true as const });
}

/** h3 v2: the answer's status and headers set on h3's response, its body returned for h3 to send. */
async function serveV2(receiver: ReceiverEndpoint, event: H3V2EventLike, bodyOptions: NodeBodyOptions): Promise<string> {
  let answer: ReceiverAnswer;
  try {
    answer = await answerV2(receiver, event, bodyOptions);
  } catch (error) {
    // Not core's answerRequest, which answers every error: an error of h3's own (bodyLimit()'s 413 while
    // it streams the body) must reach h3, which answers it; only hookline's refusals are answered here.
    if (!HooklineError.is(error)) throw error;
    answer = receiver.answerError(error);
  }
  // Answered before the body was read whole (405, 413, 408): on node:http, read and discard the rest
  // after the answer so the client reads it instead of a reset (a no-op when the body was read).
  if (answer.status >= 400) lingerOnRefusal(nodeIncoming(event), answer, bodyOptions.linger);
  event.res.status = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) event.res.headers.set(name, value);
  return answer.body;
}
