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
