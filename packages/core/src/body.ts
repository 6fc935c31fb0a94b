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
// the read of a small body). The reads waiting on a deadline form a list linked through the reads
// themselves: adding and removing one allocates nothing and hashes nothing, and a read that ended is
// unlinked at once, so nothing of it outlives its request. (An earlier design appended a small entry
// per read to an array swept every tick. Under load, `node --trace-gc` then showed each scavenge
// moving about 1.7 MB into the old generation and taking about 3 ms instead of 0.5, and the node:http
// bridge lost about a fifth of its throughput; with the reads linked through themselves both went away.)
// An interval, running only while the list is not empty, fails the late reads. A read ends at most
// DEADLINE_TICK_MS after its limit.
const DEADLINE_TICK_MS = 50;

/**
 * A read that can have a deadline: `setDeadline` links it into the list through its own fields
 * (start them at 0 and undefined) and calls `expire()` once the deadline passed.
 */
export interface Expiring {
  /** When the deadline passes (ms since the epoch); 0 while the read is not in the list. */
  deadlineAt: number;
  deadlinePrev: Expiring | undefined;
  deadlineNext: Expiring | undefined;
  expire(): void;
}

let first: Expiring | undefined;
let last: Expiring | undefined;
let sweeper: ReturnType<typeof setInterval> | undefined;
/** The sweeper's clock: Date.now() at its last tick (or when it started). */
let clock = 0;

function unlink(read: Expiring): void {
  const { deadlinePrev: prev, deadlineNext: next } = read;
  if (prev === undefined) first = next;
  else prev.deadlineNext = next;
  if (next === undefined) last = prev;
  else next.deadlinePrev = prev;
  read.deadlinePrev = undefined;
  read.deadlineNext = undefined;
  read.deadlineAt = 0;
}

function sweep(): void {
  clock = Date.now();
  // Reads are in the order they started, but limits may differ: the whole list is walked. It holds
  // only the reads under way, a few per open connection at most.
  const due: Expiring[] = [];
  for (let read = first; read !== undefined; ) {
    const next = read.deadlineNext;
    if (read.deadlineAt <= clock) {
      unlink(read);
      due.push(read);
    }
    read = next;
  }
  if (first === undefined) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
  for (const read of due) read.expire();
}

/**
 * Calls `read.expire()` once `timeoutMs` have passed (to at most one tick, 50 ms, later), unless
 * `clearDeadline(read)` came first. For reads on Node; the Web path uses a timer of its own.
 */
export function setDeadline(timeoutMs: number, read: Expiring): void {
  if (read.deadlineAt !== 0) unlink(read);
  if (sweeper === undefined) {
    clock = Date.now();
    sweeper = setInterval(sweep, DEADLINE_TICK_MS);
    // Never keeps the process alive by itself.
    (sweeper as { unref?: () => void }).unref?.();
  }
  // `clock` may be a tick old: one tick more never ends a read before its limit.
  read.deadlineAt = clock + timeoutMs + DEADLINE_TICK_MS;
  read.deadlinePrev = last;
  read.deadlineNext = undefined;
  if (last === undefined) first = read;
  else last.deadlineNext = read;
  last = read;
}

/** Takes a read out of the list (a no-op when it is not in it, or its deadline fired). */
export function clearDeadline(read: Expiring): void {
  if (read.deadlineAt !== 0) unlink(read);
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
