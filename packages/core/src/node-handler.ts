import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyAlreadyParsed, methodNotAllowed, notFound, payloadTooLarge, type ReceiverAnswer } from './answers';
import { checkDeclaredLength, concatChunks } from './body';
import { HooklineError } from './errors';
import type { ReceiverEndpoint } from './receiver';

/** A node request that a framework may have decorated with a parsed or raw body. */
export type NodeRequest = IncomingMessage & { body?: unknown; rawBody?: unknown; _body?: unknown };

const PARSED_FIX =
  'Mount the webhook route before any JSON/text body parser (e.g. before app.use(express.json())), or give it a raw parser (express.raw({ type: "*/*" })) so the exact bytes reach hookline.';

/**
 * The request's raw bytes: a `Buffer` a raw parser left in `req.body` or `req.rawBody`, or the stream
 * read with the size limit. A body some other parser already consumed is a configuration error at
 * once, never a wait on a stream that has ended.
 *
 * @example
 * const body = await readNodeBody(req, receiver.maxBodyBytes);
 * writeNodeAnswer(res, await receiver.handle({ body, headers: req.headers }));
 */
export function readNodeBody(req: NodeRequest, limit: number, fix = PARSED_FIX): Promise<Uint8Array> {
  const buffered = req.body instanceof Uint8Array ? req.body : req.rawBody instanceof Uint8Array ? req.rawBody : undefined;
  if (buffered !== undefined) {
    return buffered.byteLength > limit ? Promise.reject(payloadTooLarge(limit)) : Promise.resolve(buffered);
  }
  // body-parser marks what it parsed with `_body`; a string body came from a text parser.
  if (req._body === true || typeof req.body === 'string' || req.readableEnded) {
    return Promise.reject(bodyAlreadyParsed(fix));
  }
  try {
    checkDeclaredLength(req.headers['content-length'], limit);
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let total = 0;
    // Listeners are never removed: once the promise settles the rest is ignored, and a request is
    // read once. Removing four listeners per request cost more than the whole read on small bodies.
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      total += chunk.byteLength;
      if (total > limit) {
        // Stop reading: the answer is written now and the connection closed (`connection: close`).
        req.pause();
        fail(payloadTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(concatChunks(chunks, total));
    });
    // A client that goes away mid-body makes node emit 'error' ("aborted", ECONNRESET) since Node 16.
    req.on('error', fail);
  });
}

/**
 * Writes the receiver's answer to a node response (no-op when something already answered).
 *
 * @example
 * writeNodeAnswer(res, await receiver.handle({ body, headers: req.headers }));
 */
export function writeNodeAnswer(res: ServerResponse, answer: ReceiverAnswer): void {
  if (res.headersSent || res.writableEnded) return;
  // One writeHead with every header: node then serialises the object as is, where each setHeader()
  // validates and stores its header first (headers a middleware set before still go out).
  res.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) });
  res.end(answer.body);
}

/** Options of `createNodeHandler()`. */
export interface NodeHandlerOptions {
  /**
   * Serve only this path (the query string is ignored); other paths get 404, or go to `next` when
   * the handler is used as middleware.
   * @default undefined (every path)
   */
  path?: string;
  /**
   * The configuration error's advice when a framework already parsed the body.
   * @default advice to mount the route before any body parser, or to give it express.raw()
   */
  parsedBodyFix?: string;
}

/**
 * A node:http listener (and Connect-style middleware) for a receiver: streams the body with the size
 * limit, hands the bytes to `receiver.handle`, writes its answer. The adapter for plain Node and for
 * any framework that exposes node's `req`/`res`.
 *
 * @example
 * http.createServer(createNodeHandler(receiver, { path: '/webhooks' })).listen(3000, '127.0.0.1');
 */
export function createNodeHandler(receiver: ReceiverEndpoint, options: NodeHandlerOptions = {}) {
  const { path, parsedBodyFix } = options;
  return async function hooklineNodeHandler(req: NodeRequest, res: ServerResponse, next?: (error?: unknown) => void): Promise<void> {
    if (path !== undefined) {
      const url = req.url ?? '/';
      const query = url.indexOf('?');
      if ((query === -1 ? url : url.slice(0, query)) !== path) {
        if (next) return next();
        writeNodeAnswer(res, receiver.answerError(notFound(path)));
        return;
      }
    }
    if (req.method !== 'POST') {
      writeNodeAnswer(res, receiver.answerError(methodNotAllowed(req.method ?? 'unknown')));
      return;
    }
    let body: Uint8Array;
    try {
      body = await readNodeBody(req, receiver.maxBodyBytes, parsedBodyFix);
    } catch (error) {
      if (!HooklineError.is(error)) {
        // The client went away mid-body: nobody is left to answer.
        res.destroy();
        return;
      }
      writeNodeAnswer(res, receiver.answerError(error));
      return;
    }
    writeNodeAnswer(res, await receiver.handle({ body, headers: req.headers, url: req.url }));
  };
}
