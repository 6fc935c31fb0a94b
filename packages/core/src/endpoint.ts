/**
 * What an adapter hands a receiver and the part of a receiver it calls: the ground floor that the
 * receiver (receiver.ts), its steps and the adapters all stand on, so none of them imports another
 * for these types.
 */
import type { ReceiverAnswer } from './answers';
import type { HeadersInput } from './headers';

/** What an adapter hands to `receiver.handle()`. */
export interface ReceiverInput {
  /** The raw bytes exactly as received. */
  body: Uint8Array;
  /** A Web `Headers` or node's lower-case header record. */
  headers: HeadersInput;
  /** The request URL, passed to a per-tenant secret resolver. */
  url?: string;
}

/** The part of a receiver an adapter needs; any `Receiver<E>` is one. */
export interface ReceiverEndpoint {
  /** Serves a Web `Request` (Bun, Deno, Cloudflare Workers, Next.js App Router, Hono…). */
  fetch(request: Request): Promise<Response>;
  /** The adapter entry point: raw bytes and headers in, the answer out. Never throws. */
  handle(input: ReceiverInput): Promise<ReceiverAnswer>;
  /** The answer for an error met before `handle` (body too large, body already parsed…); fires `rejected`. */
  answerError(error: unknown): ReceiverAnswer;
  /** The body limit adapters enforce while streaming. */
  readonly maxBodyBytes: number;
  /** The body-read time limit adapters enforce while streaming (408 past it). */
  readonly bodyTimeoutMs: number;
}
