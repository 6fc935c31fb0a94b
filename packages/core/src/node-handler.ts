import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyAlreadyParsed, methodNotAllowed, notFound, payloadTooLarge, type ReceiverAnswer, requestTimeout } from './answers';
import { checkDeclaredLength, clearDeadline, concatChunks, type Deadline, hasTimeLimit, setDeadline } from './body';
import { HooklineError } from './errors';
import type { ReceiverEndpoint } from './receiver';

/** A node request that a framework may have decorated with a parsed or raw body. */
export type NodeRequest = IncomingMessage & { body?: unknown; rawBody?: unknown; _body?: unknown };

const PARSED_FIX =
  "Mount the webhook route before any JSON/text body parser (e.g. before app.use(express.json())), or give it a raw parser that keeps the bytes as sent: express.raw({ type: (req) => !req.headers['content-encoding'], limit: receiver.maxBodyBytes, inflate: false }).";

/**
 * Bounds of the lingering close: what hookline still reads, and throws away, from a client it
 * answered before reading its whole body (a 413, a 408, a 405 or 404 to a request with a body).
 * Past any of them the connection is closed at once (a client still sending then meets a reset).
 */
export interface LingerOptions {
  /**
   * Most body bytes read and discarded after such an answer.
   * @default 67_108_864 (64 MiB)
   */
  maxBytes?: number;
  /**
   * Longest time the connection stays open after such an answer while the client goes on sending
   * (nginx's lingering_time). `0` turns the lingering close off: node closes at once.
   * @default 30_000
   */
  maxMs?: number;
  /**
   * Longest silence from the client during it (nginx's lingering_timeout).
   * @default 5_000
   */
  idleMs?: number;
}

/** The lingering close's bounds when none are given. */
export const LINGER_DEFAULTS: Readonly<Required<LingerOptions>> = { maxBytes: 64 * 1024 * 1024, maxMs: 30_000, idleMs: 5_000 };

/** Options of `readNodeBody()`. */
export interface NodeBodyOptions {
  /** The configuration error's advice when a framework already parsed the body. */
  fix?: string;
  /** Body-read time limit: past it the read fails with 408 REQUEST_TIMEOUT (`receiver.bodyTimeoutMs`). */
  timeoutMs?: number;
  /** Bounds of the lingering close after a 413 or 408; see `LingerOptions`. */
  linger?: LingerOptions;
}

const LINGERING = Symbol.for('hookline.lingering');
type LingeringSocket = NonNullable<IncomingMessage['socket']> & { [LINGERING]?: true };

/** Whether body bytes of this request may still be on their way (it has a body, not yet read whole). */
function bodyToCome(req: IncomingMessage): boolean {
  if (req.complete || req.readableEnded) return false;
  const headers = req.headers as IncomingMessage['headers'] | undefined;
  if (headers === undefined) return false;
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '' && length !== '0');
}

/**
 * Lingering close for a request answered before its body was read whole (nginx's lingering_close,
 * Go's bounded discard). Closing at once would reset the connection while the client is still
 * sending, and a client that writes the whole body before reading (Python's urllib, curl without
 * `Expect: 100-continue`, many HTTP libraries) would meet ECONNRESET or EPIPE instead of the answer.
 * So: the rest of the body is read and thrown away (never buffered) from now on, and when node closes
 * the connection after the answer (`connection: close`), it sends its FIN first and destroys the
 * socket only once the client has sent the whole body or closed, or after `maxBytes` or `maxMs`.
 *
 * Returns whether the request still had body bytes to come: the answer must then carry
 * `connection: close` (`writeEarlyNodeAnswer` adds it). Idempotent; a no-op for a request whose body
 * is complete, for HTTP/2, and for a stream that is not node's request.
 *
 * @example
 * if (lingerAfterAnswer(req)) answer.headers.connection = 'close';
 * writeNodeAnswer(res, answer);
 */
export function lingerAfterAnswer(req: IncomingMessage, options: LingerOptions = {}): boolean {
  if (!bodyToCome(req) || req.httpVersionMajor >= 2) return false;
  const socket = req.socket as LingeringSocket | null | undefined;
  if (socket == null || socket.destroyed || typeof socket.destroySoon !== 'function') return false;
  if (socket[LINGERING] === true) return true;
  socket[LINGERING] = true;
  const { maxBytes = LINGER_DEFAULTS.maxBytes, maxMs = LINGER_DEFAULTS.maxMs, idleMs = LINGER_DEFAULTS.idleMs } = options;
  if (!(maxMs > 0)) return true; // lingering off: node closes at once, as it would without hookline

  // Discard from now on: the client's bytes keep flowing (no TCP window filling up while the answer
  // is written) and node does not dump the body on its own, unbounded, after the answer. Whoever else
  // read the body (a Web stream made from it, say) gets no more of it, as with node's own dump.
  req.removeAllListeners('data');
  let discarded = 0;
  req.on('data', (chunk: Uint8Array) => {
    discarded += chunk.byteLength;
    if (discarded > maxBytes) socket.destroy();
  });
  req.on('error', () => {}); // the client going away mid-body is expected here
  req.resume();

  // node calls destroySoon() once a `connection: close` answer is written (so does @hono/node-server
  // when its own drain gives up): end our side (FIN after the answer), keep reading until the client
  // is done, then destroy. Later calls are no-ops, so nobody cuts the lingering short.
  let closing = false;
  socket.destroySoon = function lingeringClose() {
    if (closing) return;
    closing = true;
    if (socket.writable) socket.end();
    const destroyAfterFlush = () => {
      if (socket.writableFinished || !socket.writable) socket.destroy();
      else socket.once('finish', () => socket.destroy());
    };
    if (!bodyToCome(req)) return destroyAfterFlush();
    const timer = setTimeout(() => socket.destroy(), maxMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    // node's idle timer, refreshed by every read: a client that stops sending is let go sooner.
    if (idleMs > 0 && idleMs < maxMs) socket.setTimeout(idleMs, () => socket.destroy());
    req.once('end', destroyAfterFlush);
  };
  return true;
}

/**
 * Writes an answer given before the body was read whole: with a lingering close (and
 * `connection: close`) when body bytes may still be on their way, so the client reads the answer
 * instead of a reset.
 *
 * @example
 * writeEarlyNodeAnswer(req, res, receiver.answerError(methodNotAllowed(req.method ?? 'unknown')));
 */
export function writeEarlyNodeAnswer(req: IncomingMessage, res: ServerResponse, answer: ReceiverAnswer, linger?: LingerOptions): void {
  if (lingerAfterAnswer(req, linger)) answer.headers.connection = 'close';
  writeNodeAnswer(res, answer);
}

/**
 * The request's raw bytes: a `Buffer` a raw parser left in `req.body` or `req.rawBody`, or the stream
 * read with the size limit (and, with `timeoutMs`, the time limit). A body some other parser already
 * consumed is a configuration error at once, never a wait on a stream that has ended. A body refused
 * while it is still coming (413 over the limit, 408 past the time) is read on and discarded after the
 * answer (`lingerAfterAnswer`). The third argument may be the configuration error's advice alone.
 *
 * @example
 * const body = await readNodeBody(req, receiver.maxBodyBytes, { timeoutMs: receiver.bodyTimeoutMs });
 * writeNodeAnswer(res, await receiver.handle({ body, headers: req.headers }));
 */
export function readNodeBody(req: NodeRequest, limit: number, options?: string | NodeBodyOptions): Promise<Uint8Array> {
  let fix = PARSED_FIX;
  let timeoutMs: number | undefined;
  let linger: LingerOptions | undefined;
  if (typeof options === 'string') fix = options;
  else if (options !== undefined) ({ fix = PARSED_FIX, timeoutMs, linger } = options);
  const buffered = req.body instanceof Uint8Array ? req.body : req.rawBody instanceof Uint8Array ? req.rawBody : undefined;
  if (buffered !== undefined) {
    return buffered.byteLength > limit ? Promise.reject(payloadTooLarge(limit)) : Promise.resolve(buffered);
  }
  // body-parser marks what it parsed with `_body`; a string body came from a text parser.
  if (req._body === true || typeof req.body === 'string' || req.readableEnded) {
    return Promise.reject(bodyAlreadyParsed(fix));
  }
  try {
    checkDeclaredLength(req.headers?.['content-length'], limit);
  } catch (error) {
    lingerAfterAnswer(req, linger);
    return Promise.reject(error);
  }
  return new Promise<Uint8Array>((resolve, reject) => {
    let chunks: Uint8Array[] = [];
    let total = 0;
    // Listeners are never removed: once the promise settles the rest is ignored, and a request is
    // read once. Removing four listeners per request cost more than the whole read on small bodies.
    let settled = false;
    let deadline: Deadline | undefined;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      chunks = [];
      if (deadline !== undefined) clearDeadline(deadline);
      reject(error);
    };
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      total += chunk.byteLength;
      if (total > limit) {
        // Refused while the body is still coming: answer now, discard the rest (lingering close).
        req.pause();
        lingerAfterAnswer(req, linger);
        return fail(payloadTooLarge(limit));
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      if (deadline !== undefined) clearDeadline(deadline);
      resolve(concatChunks(chunks, total));
    });
    // A client that goes away mid-body makes node emit 'error' ("aborted", ECONNRESET) since Node 16.
    req.on('error', fail);
    if (hasTimeLimit(timeoutMs)) {
      const limitMs = timeoutMs;
      deadline = setDeadline(limitMs, () => {
        if (settled) return;
        req.pause();
        lingerAfterAnswer(req, linger);
        fail(requestTimeout(limitMs));
      });
    }
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
  /**
   * Bounds of the lingering close after an answer given before the whole body was read (413, 408,
   * 405, 404): the rest is read and discarded so that the client reads the answer instead of a reset.
   * @default { maxBytes: 64 MiB, maxMs: 30_000, idleMs: 5_000 }
   */
  linger?: LingerOptions;
}

/**
 * A node:http listener (and Connect-style middleware) for a receiver: streams the body with the size
 * and time limits, hands the bytes to `receiver.handle`, writes its answer. The adapter for plain Node
 * and for any framework that exposes node's `req`/`res`.
 *
 * @example
 * http.createServer(createNodeHandler(receiver, { path: '/webhooks' })).listen(3000, '127.0.0.1');
 */
export function createNodeHandler(receiver: ReceiverEndpoint, options: NodeHandlerOptions = {}) {
  const { path, parsedBodyFix = PARSED_FIX, linger } = options;
  const bodyOptions: NodeBodyOptions = { fix: parsedBodyFix, timeoutMs: receiver.bodyTimeoutMs, linger };
  return async function hooklineNodeHandler(req: NodeRequest, res: ServerResponse, next?: (error?: unknown) => void): Promise<void> {
    if (path !== undefined) {
      const url = req.url ?? '/';
      const query = url.indexOf('?');
      if ((query === -1 ? url : url.slice(0, query)) !== path) {
        if (next) return next();
        writeEarlyNodeAnswer(req, res, receiver.answerError(notFound(path)), linger);
        return;
      }
    }
    if (req.method !== 'POST') {
      writeEarlyNodeAnswer(req, res, receiver.answerError(methodNotAllowed(req.method ?? 'unknown')), linger);
      return;
    }
    let body: Uint8Array;
    try {
      body = await readNodeBody(req, receiver.maxBodyBytes, bodyOptions);
    } catch (error) {
      if (!HooklineError.is(error)) {
        // The client went away mid-body: nobody is left to answer.
        res.destroy();
        return;
      }
      writeEarlyNodeAnswer(req, res, receiver.answerError(error), linger);
      return;
    }
    writeNodeAnswer(res, await receiver.handle({ body, headers: req.headers, url: req.url }));
  };
}
