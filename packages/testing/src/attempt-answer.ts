/** Why an attempt got no answer: the socket error's code (`ECONNREFUSED`, `ENOTFOUND`, …) or `TIMEOUT`. */
export interface AttemptError {
  /** `ECONNREFUSED`, `ENOTFOUND`, `ECONNRESET`, `UND_ERR_SOCKET`, … from the socket; `TIMEOUT` past the time limit. */
  code: string;
  /** The error's own message (`connect ECONNREFUSED 127.0.0.1:3000`). */
  message: string;
}

/** The start of an answer's body, as much as is kept. */
export interface AnswerStart {
  text: string;
  /** More followed than `text` holds: it was not read, and the connection was dropped. */
  truncated: boolean;
}

/**
 * Reads an answer's body up to `maxChars` characters and stops there: the rest is never read, and the
 * stream is cancelled, which drops the connection. Reading a body whole to keep its start would make an
 * endpoint that streams 300 MB cost the reader about 900 MB (the bytes, then the string). What is read
 * past the limit is at most the one network chunk that crossed it (64 KiB on a socket).
 */
export async function readAnswerStart(body: ReadableStream<Uint8Array> | null, maxChars: number): Promise<AnswerStart> {
  if (body === null) return { text: '', truncated: false };
  const reader = body.getReader();
  const decoder = new TextDecoder();
  // A UTF-16 code unit takes at most 3 bytes of UTF-8 (4 bytes make 2 units): past that, the text is long enough.
  const maxBytes = maxChars * 3 + 3;
  let text = '';
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      text += decoder.decode();
      return { text: text.slice(0, maxChars), truncated: text.length > maxChars };
    }
    bytes += value.byteLength;
    text += decoder.decode(value, { stream: true });
    if (text.length > maxChars || bytes > maxBytes) {
      // Not awaited: a peer that never ends its answer must not hold the attempt up.
      reader.cancel().catch(() => {});
      return { text: text.slice(0, maxChars), truncated: true };
    }
  }
}

/** What each socket error usually means for a webhook endpoint, said where the attempt is shown. */
const HINTS: Record<string, string> = {
  ECONNREFUSED: 'nothing is listening there: is the app running, on that port?',
  ENOTFOUND: 'the host name does not resolve: check the webhook URL',
  EAI_AGAIN: 'the host name could not be resolved just now (DNS): check the webhook URL and the network',
  ECONNRESET: 'the connection was reset before an answer came: did the app crash or close it?',
  UND_ERR_SOCKET: 'the connection closed before an answer came: did the app crash or close it?',
  EHOSTUNREACH: 'no route to that host',
  ENETUNREACH: 'no route to that network',
  ETIMEDOUT: 'the connection could not be made in time',
  UND_ERR_CONNECT_TIMEOUT: 'the connection could not be made in time',
  HPE_INVALID_CONSTANT: 'the answer is not HTTP/1.1: is something else on that port?',
  ERR_SSL_WRONG_VERSION_NUMBER: 'the URL says https but the server speaks plain http (or the reverse)',
  TIMEOUT: 'the service counts it as failed and retries: answer within the limit, and move slow work behind a queue',
  BAD_PORT: "fetch refuses to connect to that port, one of the browsers' unsafe ports: use another one",
};

/**
 * The socket error inside a fetch failure. undici's `TypeError: fetch failed` says nothing: the reason
 * is its `cause` (`ECONNREFUSED`), which Node 22's happy-eyeballs connect may make an AggregateError of
 * one error per address, with the code on the aggregate and the addresses on its parts.
 */
export function networkErrorOf(error: unknown): AttemptError {
  const cause = (error as { cause?: unknown } | undefined)?.cause as
    | { code?: unknown; message?: unknown; errors?: { message?: unknown }[] }
    | undefined;
  if (cause !== undefined && cause !== null) {
    const parts = Array.isArray(cause.errors) ? cause.errors.map((part) => String(part.message ?? '')).filter(Boolean) : [];
    const message = typeof cause.message === 'string' && cause.message !== '' ? cause.message : parts.join('; ');
    if (typeof cause.code === 'string') return { code: cause.code, message: message || cause.code };
    if (message === 'bad port') return { code: 'BAD_PORT', message };
    if (message !== '') return { code: 'NETWORK_ERROR', message };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: (error as { code?: unknown } | undefined)?.code?.toString() ?? 'NETWORK_ERROR', message };
}

/** One line for an attempt that got no answer: `ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:3000 (nothing is listening there: …)`. */
export function describeAttemptError(error: AttemptError): string {
  const hint = HINTS[error.code];
  const bare = error.message.includes(error.code) || ['NETWORK_ERROR', 'TIMEOUT', 'BAD_PORT'].includes(error.code);
  const head = bare ? error.message : `${error.code}: ${error.message}`;
  return hint === undefined ? head : `${head} (${hint})`;
}
