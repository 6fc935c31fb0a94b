import { methodNotAllowed, notFound, type ReceiverAnswer } from './answers';
import { isPromiseLike } from './awaitable';
import { receiveDirect } from './receiver-entry';
import { HooklineError } from './errors';
import { type AdapterOptions, routeBodyTimeoutMs } from './adapter-options';
import { type BodyDestination, type NodeBodyOptions, type NodeRequest, PARSED_BODY_FIX, readNodeBodyInto } from './node-body';
import { type LingerOptions, lingerOnRefusal } from './node-linger';
import type { NodeIncomingMessage, NodeServerResponse } from './node-types';
import type { ReceiverEndpoint } from './endpoint';

// The bridge's building blocks live in node-body.ts (reading) and node-linger.ts (the lingering close).
export { asNodeRequest, type NodeBodyOptions, type NodeRequest, readNodeBody } from './node-body';
export type { NodeIncomingMessage, NodeServerResponse } from './node-types';
export { LINGER_DEFAULTS, type LingerOptions, lingerOnRefusal } from './node-linger';

/**
 * Writes an answer given before the body was read whole: with a lingering close (and
 * `connection: close`) when body bytes may still be on their way, so the client reads the answer
 * instead of a reset.
 *
 * @example
 * writeEarlyNodeAnswer(req, res, receiver.answerError(methodNotAllowed(req.method ?? 'unknown')));
 */
export function writeEarlyNodeAnswer(
  req: NodeIncomingMessage,
  res: NodeServerResponse,
  answer: ReceiverAnswer,
  linger?: LingerOptions,
): void {
  writeNodeAnswer(res, lingerOnRefusal(req, answer, linger));
}

/**
 * Writes the receiver's answer to a node response (no-op when something already answered).
 *
 * @example
 * writeNodeAnswer(res, await receiver.handle({ body, headers: req.headers }));
 */
export function writeNodeAnswer(res: NodeServerResponse, answer: ReceiverAnswer): void {
  if (res.headersSent || res.writableEnded) return;
  // One writeHead with every header: node then serialises the object as is, where each setHeader()
  // validates and stores its header first (headers a middleware set before still go out). The answer
  // is the adapter's to change (answers.ts), so its own headers object takes the length: no copy
  // (one an adapter froze is copied).
  const headers = Object.isExtensible(answer.headers) ? answer.headers : { ...answer.headers };
  headers['content-length'] = String(Buffer.byteLength(answer.body));
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}

/** Options of `createNodeHandler()`. */
export interface NodeHandlerOptions extends AdapterOptions {
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
 * and time limits, hands the bytes to `receiver.handle`, writes its answer. The adapter for plain Node
 * and for any framework that exposes node's `req`/`res`.
 *
 * @example
 * http.createServer(createNodeHandler(receiver, { path: '/webhooks' })).listen(3000, '127.0.0.1');
 */
export function createNodeHandler(receiver: ReceiverEndpoint, options: NodeHandlerOptions = {}) {
  const { path, parsedBodyFix = PARSED_BODY_FIX, linger, bodyTimeoutMs } = options;
  const timeoutMs = routeBodyTimeoutMs('createNodeHandler', receiver, bodyTimeoutMs);
  const bodyOptions: NodeBodyOptions = { fix: parsedBodyFix, timeoutMs, linger };
  // Not an async function: the body is read with callbacks and an answer the receiver gave
  // synchronously is written in the same turn (receiveDirect), one microtask after the body's end.
  // That microtask is kept on purpose: the promise is subscribed to here, so the receiver and the
  // handlers run in this call's async context (AsyncLocalStorage, OpenTelemetry's active span), not
  // in the stream's. The promise settles once the answer is written, for frameworks that await it.
  return function hooklineNodeHandler(req: NodeRequest, res: NodeServerResponse, next?: (error?: unknown) => void): Promise<void> {
    if (path !== undefined) {
      const url = req.url ?? '/';
      const query = url.indexOf('?');
      if ((query === -1 ? url : url.slice(0, query)) !== path) {
        if (next) return settleWith(next);
        writeEarlyNodeAnswer(req, res, receiver.answerError(notFound(path)), linger);
        return WRITTEN;
      }
    }
    if (req.method !== 'POST') {
      writeEarlyNodeAnswer(req, res, receiver.answerError(methodNotAllowed(req.method ?? 'unknown')), linger);
      return WRITTEN;
    }
    return new Promise<Exchange>((bodyDone) => {
      readNodeBodyInto(req, receiver.maxBodyBytes, bodyOptions, new Exchange(receiver, req, res, linger, bodyDone));
    }).then(respond);
  };
}

/**
 * One request through the bridge, from its body to the written answer. It is where the body reader
 * hands the bytes and what the handler's promise settles with (it has no `then`, so the promise takes
 * it as a value), so the answer needs no callbacks made per request: against
 * `readNodeBody(…).then(onBytes, onError)` the bridge ran 194,700 instead of 198,600 instructions per
 * request (0.980×, bench/README.md "Counting instructions").
 */
class Exchange implements BodyDestination {
  private bytes: Uint8Array | undefined = undefined;
  private refusal: Error | undefined = undefined;

  constructor(
    private readonly receiver: ReceiverEndpoint,
    private readonly req: NodeRequest,
    private readonly res: NodeServerResponse,
    private readonly linger: LingerOptions | undefined,
    /** Settles the handler's promise with this exchange once the body is read or refused. */
    private readonly bodyDone: (exchange: Exchange) => void,
  ) {}

  bodyRead(bytes: Uint8Array): void {
    this.bytes = bytes;
    this.bodyDone(this);
  }

  bodyRefused(error: Error): void {
    this.refusal = error;
    this.bodyDone(this);
  }

  /** Answers: the receiver's answer to the body, or the refusal's. */
  respond(): void | Promise<void> {
    if (this.refusal !== undefined) return this.refused(this.refusal);
    const answer = receiveDirect(this.receiver, { body: this.bytes as Uint8Array, headers: this.req.headers, url: this.req.url });
    if (isPromiseLike(answer)) return answer.then((value) => writeNodeAnswer(this.res, value));
    writeNodeAnswer(this.res, answer);
  }

  private refused(error: Error): void {
    if (HooklineError.is(error)) writeEarlyNodeAnswer(this.req, this.res, this.receiver.answerError(error), this.linger);
    else this.res.destroy(); // the client went away mid-body: nobody is left to answer
  }
}

const respond = (exchange: Exchange): void | Promise<void> => exchange.respond();

const WRITTEN: Promise<void> = Promise.resolve();

/** Passes the request on (`next`), settling as an async middleware would with what `next` returned or threw. */
function settleWith(next: () => unknown): Promise<void> {
  try {
    return Promise.resolve(next()).then(() => undefined);
  } catch (error) {
    return Promise.reject(error);
  }
}
