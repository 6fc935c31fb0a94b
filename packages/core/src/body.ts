import { bodyAlreadyParsed, payloadTooLarge } from './answers';

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

/**
 * Reads a Web `Request`'s body as bytes, stopping (and cancelling the stream) as soon as it passes
 * `limit`, so an oversized body is never buffered whole. Never decodes text: `text()` would strip a
 * BOM and change the bytes the signature covers.
 *
 * @example
 * const body = await readRequestBody(request, receiver.maxBodyBytes); // throws PAYLOAD_TOO_LARGE past the limit
 */
export async function readRequestBody(request: Request, limit: number): Promise<Uint8Array> {
  if (request.bodyUsed) {
    throw bodyAlreadyParsed(
      'Something read the Request body before hookline did; hand hookline the untouched request (or request.clone()).',
    );
  }
  // A declared length within the limit bounds the body (HTTP frames it by that length; receiver.handle
  // checks the bytes again): the runtime's own arrayBuffer() is then far cheaper than a reader loop.
  if (checkDeclaredLength(request.headers.get('content-length'), limit) !== undefined) {
    return new Uint8Array(await request.arrayBuffer());
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge(limit);
    }
    chunks.push(value);
  }
  return concatChunks(chunks, total);
}
