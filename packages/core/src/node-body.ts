import { bodyAlreadyParsed, payloadTooLarge, requestTimeout } from './answers';
import { checkDeclaredLength, concatChunks, hasTimeLimit } from './body';
import { clearDeadline, type Expiring, setDeadline } from './node-deadlines';
import { type LingerOptions, lingerAfterAnswer } from './node-linger';

import type { NodeRequest } from './node-types';

export type { NodeRequest } from './node-types';

/**
 * `value` as node's request when it is one (a stream with a header record), else undefined: how an
 * adapter for a framework that runs on several runtimes finds node's request behind its own.
 */
export function asNodeRequest(value: unknown): NodeRequest | undefined {
  const candidate = value as Partial<NodeRequest> | null | undefined;
  if (candidate == null || typeof candidate.on !== 'function' || typeof candidate.headers !== 'object') return undefined;
  return candidate as NodeRequest;
}

/** The configuration error's advice when a framework already parsed the body (the Express wording). */
export const PARSED_BODY_FIX =
  "Mount the webhook route before any JSON/text body parser (e.g. before app.use(express.json())), or give it a raw parser that keeps the bytes as sent: express.raw({ type: (req) => !req.headers['content-encoding'], limit: receiver.maxBodyBytes, inflate: false }).";

/** Options of `readNodeBody()`. */
export interface NodeBodyOptions {
  /** The configuration error's advice when a framework already parsed the body. */
  fix?: string;
  /** Body-read time limit: past it the read fails with 408 REQUEST_TIMEOUT (`receiver.bodyTimeoutMs`). */
  timeoutMs?: number;
  /** Bounds of the lingering close after a 413 or 408; see `LingerOptions`. */
  linger?: LingerOptions;
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
  const bodyOptions: NodeBodyOptions = typeof options === 'string' ? { fix: options } : (options ?? {});
  return new Promise((resolve, reject) => readNodeBodyInto(req, limit, bodyOptions, { bodyRead: resolve, bodyRefused: reject }));
}

/** Where `readNodeBodyInto` hands the bytes, or the reason it refused them. */
export interface BodyDestination {
  bodyRead(bytes: Uint8Array): void;
  bodyRefused(error: Error): void;
}

/**
 * `readNodeBody` without its promise: the outcome goes to `to`, at once for a body already buffered,
 * already parsed or declared over the limit, else when the stream ends or is refused. For the node:http
 * bridge, whose exchange is its own destination, so a request costs it no closure.
 */
export function readNodeBodyInto(req: NodeRequest, limit: number, options: NodeBodyOptions, to: BodyDestination): void {
  const buffered = req.body instanceof Uint8Array ? req.body : req.rawBody instanceof Uint8Array ? req.rawBody : undefined;
  if (buffered !== undefined) {
    if (buffered.byteLength > limit) to.bodyRefused(payloadTooLarge(limit));
    else to.bodyRead(buffered);
    return;
  }
  // body-parser marks what it parsed with `_body`; a string body came from a text parser.
  if (req._body === true || typeof req.body === 'string' || req.readableEnded) {
    to.bodyRefused(bodyAlreadyParsed(options.fix ?? PARSED_BODY_FIX));
    return;
  }
  try {
    checkDeclaredLength(req.headers?.['content-length'], limit);
  } catch (error) {
    lingerAfterAnswer(req, options.linger);
    to.bodyRefused(error as Error);
    return;
  }
  const read = new StreamRead(req, limit, options, to);
  listen(req, read);
  if (hasTimeLimit(options.timeoutMs)) setDeadline(options.timeoutMs, read);
}

/**
 * One streaming read, its state in one object; the deadline calls its `expire()`. Listeners are never
 * removed: once the read is done the rest is ignored, and a request is read once (removing them cost
 * more than the whole read of a small body).
 */
class StreamRead implements Expiring {
  chunks: Uint8Array[] = [];
  total = 0;
  done = false;
  // The deadline list's links (node-deadlines.ts): 0 and undefined while the read has no deadline running.
  deadlineAt = 0;
  deadlinePrev: Expiring | undefined = undefined;
  deadlineNext: Expiring | undefined = undefined;

  constructor(
    readonly req: NodeRequest,
    readonly limit: number,
    readonly options: NodeBodyOptions,
    readonly to: BodyDestination,
  ) {}

  data(chunk: Uint8Array): void {
    if (this.done) return;
    this.total += chunk.byteLength;
    if (this.total > this.limit) this.refuseWhileComing(payloadTooLarge(this.limit));
    else this.chunks.push(chunk);
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    clearDeadline(this);
    this.to.bodyRead(concatChunks(this.chunks, this.total));
  }

  fail(error: Error): void {
    if (this.done) return;
    this.done = true;
    clearDeadline(this);
    this.chunks = [];
    this.to.bodyRefused(error);
  }

  /** The deadline passed (`setDeadline`). */
  expire(): void {
    if (!this.done) this.refuseWhileComing(requestTimeout(this.options.timeoutMs as number));
  }

  /** Refused while the body is still coming: answer now, discard the rest (lingering close). */
  private refuseWhileComing(error: Error): void {
    this.req.pause();
    lingerAfterAnswer(this.req, this.options.linger);
    this.fail(error);
  }
}

/**
 * The stream's listeners, three small closures per read. Listeners shared by every read, finding
 * their read through a symbol property set on the request, cost the same on plain node:http but
 * about 5 µs more per request under Express (whose request objects have their prototype swapped and
 * many properties added, so one more property is dear): 75.3 against 69.5 µs of server CPU per
 * request, medians of 8 interleaved rounds of 5 s with fresh processes, autocannon at 16 connections.
 * A WeakMap from request to read cost 15 µs more.
 */
function listen(req: NodeRequest, read: StreamRead): void {
  req.on('data', (chunk: Uint8Array) => read.data(chunk));
  req.on('end', () => read.end());
  // A client that goes away mid-body makes node emit 'error' ("aborted", ECONNRESET) since Node 16.
  req.on('error', (error: Error) => read.fail(error));
}
