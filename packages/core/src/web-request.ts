import { methodNotAllowed, type ReceiverAnswer } from './answers';
import { readRequestBody } from './body';
import type { ReceiverEndpoint, ReceiverInput } from './endpoint';

/**
 * The receiver's Response to a Web `Request`: 405 with `Allow: POST` to any other method, the body
 * read once, as bytes, with the receiver's size and time limits (413, 408), and every error met on
 * the way answered as the receiver answers it. What `receiver.fetch` does; adapters whose framework
 * hands them a Web `Request` (Next's App Router) return it as is. `bodyTimeoutMs` is the route's own
 * body-read limit, already checked (`routeBodyTimeoutMs`).
 *
 * @example
 * export const POST = (request: Request) => serveRequest(receiver, request);
 */
export async function serveRequest(
  receiver: ReceiverEndpoint,
  request: Request,
  bodyTimeoutMs = receiver.bodyTimeoutMs,
): Promise<Response> {
  let answer: ReceiverAnswer;
  if (request.method !== 'POST') {
    answer = receiver.answerError(methodNotAllowed(request.method));
  } else {
    try {
      const body = await readRequestBody(request, receiver.maxBodyBytes, bodyTimeoutMs);
      answer = await receiver.handle({ body, headers: request.headers, url: request.url });
    } catch (error) {
      answer = receiver.answerError(error);
    }
  }
  return toResponse(answer);
}

/**
 * The receiver's answer to a request an adapter reads its own way: 405 with `Allow: POST` to any
 * method but POST; otherwise what `read(source)` resolves to (the bytes, headers and URL) handed to
 * `receiver.handle()`. An error `read` throws or rejects with (413, 408, a body the framework already
 * parsed) is answered as the receiver answers it. `read` is a function of the adapter's own made once
 * (not per request), and `source` is what it reads from (a framework's context or event).
 *
 * @example
 * const answer = await answerRequest(receiver, c.req.method, readHonoInput, c);
 */
export async function answerRequest<S>(
  receiver: ReceiverEndpoint,
  method: string,
  read: (source: S) => Promise<ReceiverInput>,
  source: S,
): Promise<ReceiverAnswer> {
  if (method !== 'POST') return receiver.answerError(methodNotAllowed(method));
  try {
    return await receiver.handle(await read(source));
  } catch (error) {
    return receiver.answerError(error);
  }
}

/** A receiver's answer as a Web `Response`. */
export function toResponse({ status, headers, body }: ReceiverAnswer): Response {
  return new Response(body, { status, headers });
}
