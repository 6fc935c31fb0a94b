import type { IncomingMessage } from 'node:http';
import type { ReceiverAnswer } from './answers';
import type { NodeIncomingMessage } from './node-types';

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

const LINGERING = Symbol.for('hookline.lingering');
type LingeringSocket = NonNullable<IncomingMessage['socket']> & { [LINGERING]?: true };

/** Whether body bytes of this request may still be on their way (it has a body, not yet read whole). */
function bodyToCome(req: NodeIncomingMessage): boolean {
  if (req.complete || req.readableEnded) return false;
  const headers = req.headers as NodeIncomingMessage['headers'] | undefined;
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
export function lingerAfterAnswer(req: NodeIncomingMessage, options: LingerOptions = {}): boolean {
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
 * An answer about to be sent for a request that may not have been read whole: a refusal (status 400
 * or more: 405, 413, 408…) given while body bytes are still to come gets the lingering close and
 * `connection: close`. Returns the answer. For adapters that write the answer through their
 * framework, or that serve node's request only on some runtimes (`req` undefined elsewhere); a 2xx
 * answer, or a request whose body was read, is left as it is.
 *
 * @example
 * reply.code(answer.status).headers(lingerOnRefusal(request.raw, answer).headers).send(answer.body);
 */
export function lingerOnRefusal(req: NodeIncomingMessage | undefined, answer: ReceiverAnswer, linger?: LingerOptions): ReceiverAnswer {
  if (answer.status >= 400 && req !== undefined && lingerAfterAnswer(req, linger)) answer.headers.connection = 'close';
  return answer;
}
