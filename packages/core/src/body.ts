import { bodyAlreadyParsed, payloadTooLarge, requestTimeout } from './answers';

/** Concatenates chunks; one chunk is returned as is. */
export function concatChunks(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/**
 * Refuses a declared Content-Length over the limit before reading a byte. Returns the declared length
 * when there is a valid one (within the limit), `undefined` otherwise.
 */
export function checkDeclaredLength(contentLength: string | null | undefined, limit: number): number | undefined {
  if (contentLength == null || contentLength === '') return undefined;
  const declared = Number(contentLength);
  if (Number.isFinite(declared) && declared > limit) throw payloadTooLarge(limit);
  return Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined;
}

/** Whether a body-read time limit is set (a positive, finite number of milliseconds). */
export const hasTimeLimit = (timeoutMs: number | undefined): timeoutMs is number =>
  timeoutMs !== undefined && timeoutMs > 0 && Number.isFinite(timeoutMs);

// Body-read deadlines on Node: one clock for every read in the process, as node's own requestTimeout
// check does, rather than a timer per request (a setTimeout + clearTimeout costs more than the rest of
// the read of a small body). A read appends its deadline to `deadlines` (no hashing, no removal: a
// read that ends just drops its target); an interval, running only while the list is not empty,
// fails the late reads and forgets the ended ones. A read ends at most DEADLINE_TICK_MS after its limit.
const DEADLINE_TICK_MS = 50;

/** What a deadline ends: a read with an `expire()` of its own (no closure per read). */
export interface Expiring {
  expire(): void;
}

/** One read's deadline, from `setDeadline`: it holds its read only until `clearDeadline`. */
export interface Deadline {
  at: number;
  target: Expiring | undefined;
}

let deadlines: Deadline[] = [];
let sweeper: ReturnType<typeof setInterval> | undefined;
/** The sweeper's clock: Date.now() at its last tick (or when it started). */
let clock = 0;

function sweep(): void {
  clock = Date.now();
  const due: Expiring[] = [];
  const kept: Deadline[] = [];
  for (const deadline of deadlines) {
    const { target } = deadline;
    if (target === undefined) continue;
    if (deadline.at <= clock) due.push(target);
    else kept.push(deadline);
  }
  deadlines = kept;
  if (kept.length === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
  for (const target of due) target.expire();
}

/**
 * Calls `target.expire()` once `timeoutMs` have passed (to at most one tick, 50 ms, later), unless
 * `clearDeadline` came first. For reads on Node; the Web path uses a timer of its own.
 */
export function setDeadline(timeoutMs: number, target: Expiring): Deadline {
  if (sweeper === undefined) {
    clock = Date.now();
    sweeper = setInterval(sweep, DEADLINE_TICK_MS);
    // Never keeps the process alive by itself.
    (sweeper as { unref?: () => void }).unref?.();
  }
  // `clock` may be a tick old: one tick more never ends a read before its limit.
  const deadline: Deadline = { at: clock + timeoutMs + DEADLINE_TICK_MS, target };
  deadlines.push(deadline);
  return deadline;
}

/**
 * Forgets a deadline (a no-op once it fired). It drops the read at once: the list keeps the small
 * entry until the next tick, and a read kept that long (its request, response and chunks) would
 * outlive the young generation of the garbage collector at a few thousand requests a second.
 */
export function clearDeadline(deadline: Deadline): void {
  deadline.target = undefined;
}

/** A timer for one read on the Web path: `expired` rejects with 408 once `timeoutMs` have passed. */
function webDeadline(timeoutMs: number): { expired: Promise<never>; clear(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(requestTimeout(timeoutMs)), timeoutMs);
  });
  expired.catch(() => {}); // read or not, never an unhandled rejection
  return { expired, clear: () => clearTimeout(timer) };
}

/**
 * Reads a Web `Request`'s body as bytes, stopping (and cancelling the stream) as soon as it passes
 * `limit`, so an oversized body is never buffered whole. Never decodes text: `text()` would strip a
 * BOM and change the bytes the signature covers. With `timeoutMs`, a body not read whole within that
 * many milliseconds is refused with 408 REQUEST_TIMEOUT (`receiver.bodyTimeoutMs`).
 *
 * @example
 * const body = await readRequestBody(request, receiver.maxBodyBytes, receiver.bodyTimeoutMs); // 413 past the limit, 408 past the time
 */
export async function readRequestBody(request: Request, limit: number, timeoutMs?: number): Promise<Uint8Array> {
  if (request.bodyUsed) {
    throw bodyAlreadyParsed('Hand hookline the untouched Request, or request.clone() if something else must read the body first.');
  }
  const deadline = hasTimeLimit(timeoutMs) ? webDeadline(timeoutMs) : undefined;
  try {
    // A declared length within the limit bounds the body (HTTP frames it by that length; receiver.handle
    // checks the bytes again): the runtime's own arrayBuffer() is then far cheaper than a reader loop.
    if (checkDeclaredLength(request.headers.get('content-length'), limit) !== undefined) {
      const read = request.arrayBuffer();
      if (deadline === undefined) return new Uint8Array(await read);
      read.catch(() => {}); // a read given up on may fail later, once the connection closes
      return new Uint8Array(await Promise.race([read, deadline.expired]));
    }
    if (request.body === null) return new Uint8Array(0);
    const reader = request.body.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await (deadline === undefined ? reader.read() : Promise.race([reader.read(), deadline.expired]));
      } catch (error) {
        // Not awaited: a stream whose source is stalled may take as long to cancel as to read.
        reader.cancel().catch(() => {});
        throw error;
      }
      const { done, value } = result;
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => {});
        throw payloadTooLarge(limit);
      }
      chunks.push(value);
    }
    return concatChunks(chunks, total);
  } finally {
    deadline?.clear();
  }
}
