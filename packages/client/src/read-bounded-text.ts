import { ServiceError } from './service-error';

/** 10 MiB: the webhook answers are a few KiB; a list would need tens of thousands of webhooks to reach it. */
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/**
 * The answer's body as text, read as a stream and kept only up to `maxBytes`: a Content-Length over
 * the bound is refused before reading, and a body that grows past it is cancelled at that point, so a
 * huge or endless answer costs at most the bound in memory. Either way RESPONSE_TOO_LARGE, which the
 * transport does not retry (the next try would download the same answer).
 */
export async function readBoundedText(response: Response, maxBytes: number, request: string): Promise<string> {
  const declared = declaredLength(response);
  if (declared !== undefined && declared > maxBytes) {
    response.body?.cancel().catch(() => {});
    throw tooLarge(response, request, maxBytes, `declares ${declared} bytes (Content-Length)`, declared);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      reader.cancel().catch(() => {});
      throw tooLarge(response, request, maxBytes, `went past it while being read (${total} bytes so far)`);
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(concat(chunks, total));
}

/**
 * Content-Length counts the bytes on the wire; with a Content-Encoding the decoded body (what is kept)
 * differs, so only an unencoded length is trusted for the early refusal. The bytes read are counted
 * after decoding either way, which also stops a compression bomb.
 */
function declaredLength(response: Response): number | undefined {
  const encoding = response.headers.get('content-encoding');
  if (encoding !== null && encoding.trim().toLowerCase() !== 'identity') return undefined;
  const value = response.headers.get('content-length')?.trim();
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

function tooLarge(response: Response, request: string, maxBytes: number, what: string, contentLength?: number): ServiceError {
  const requestId = response.headers.get('x-request-id') ?? response.headers.get('request-id');
  return new ServiceError({
    status: response.status,
    code: 'RESPONSE_TOO_LARGE',
    message:
      `${request} answered ${response.status} with a body over maxResponseBytes (${maxBytes} bytes): it ${what}, and the rest was not read. ` +
      'If the service really sends answers this large, raise maxResponseBytes in the createServiceClient options',
    request,
    details: { maxResponseBytes: maxBytes, ...(contentLength === undefined ? {} : { contentLength }) },
    ...(requestId === null || requestId === '' ? {} : { requestId }),
  });
}
