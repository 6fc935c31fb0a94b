import { ServiceError } from './service-error';

/** Same-origin redirects followed in a row before a call fails with TOO_MANY_REDIRECTS. */
export const DEFAULT_MAX_REDIRECTS = 5;

/** The statuses fetch treats as redirects (Fetch standard, "redirect status"); 300 and 304 are answers. */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** One hop's request; the body is a string, so it can be sent again on a 307/308. */
export interface HopRequest {
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** How `fetchSameOrigin` sends and where it stops. */
export interface SameOriginFetchOptions {
  fetch: typeof globalThis.fetch;
  maxRedirects: number;
  signal: AbortSignal;
  /** `METHOD /path`, for error messages. */
  request: string;
}

/**
 * Fetches `url`, following redirects only within its origin. fetch's own `redirect: 'follow'` would
 * carry every header but `authorization` and cookies to another origin, the `x-api-key` and a POST body
 * with them: so redirects are read with `redirect: 'manual'` and followed here. A redirect to another
 * origin (another scheme, host or port) is refused with REDIRECT_REFUSED before anything is sent there.
 */
export async function fetchSameOrigin(url: string, first: HopRequest, options: SameOriginFetchOptions): Promise<Response> {
  const origin = new URL(url).origin;
  let current = new URL(url);
  let hop = first;
  for (let redirects = 0; ; redirects++) {
    const response = await options.fetch(current.href, {
      method: hop.method,
      headers: hop.headers,
      ...(hop.body === undefined ? {} : { body: hop.body }),
      redirect: 'manual',
      signal: options.signal,
    });
    checkNotFollowed(response, options.request);
    const location = response.headers.get('location');
    if (!REDIRECT_STATUSES.has(response.status) || location === null) return response;
    // The redirect's own body is of no use; cancelling it frees the connection without reading it.
    response.body?.cancel().catch(() => {});

    const target = targetOf(location, current, response, options.request);
    if (target.origin !== origin) {
      throw redirectError(response, options.request, 'REDIRECT_REFUSED', {
        message:
          `${options.request} was redirected (${response.status}) to another origin, ${originName(target)}; ` +
          `the client sends the API key only to ${origin}, so it did not follow. If that address is the service's, set baseUrl to it`,
        details: { targetOrigin: originName(target) },
      });
    }
    if (redirects >= options.maxRedirects) {
      throw redirectError(response, options.request, 'TOO_MANY_REDIRECTS', {
        message:
          `${options.request} was redirected more than maxRedirects (${options.maxRedirects}) times in a row, ` +
          `the last one ${response.status} to ${target.pathname}; check baseUrl, or raise maxRedirects if the service really redirects this often`,
        details: { maxRedirects: options.maxRedirects, targetPath: target.pathname },
      });
    }
    hop = nextHop(hop, response.status);
    current = target;
  }
}

/**
 * The request after a redirect, as fetch and browsers do it (Fetch standard, HTTP-redirect fetch):
 * 307 and 308 repeat the method and body; 303 turns anything but GET and HEAD into a GET without a body;
 * 301 and 302 do so for a POST only (the historical browser behaviour the standard keeps), so a PATCH or
 * DELETE keeps its method and body. A body dropped takes its content-type with it, and the
 * idempotency-key too: it is sent with POSTs only.
 */
function nextHop(hop: HopRequest, status: number): HopRequest {
  const becomesGet =
    (status === 303 && hop.method !== 'GET' && hop.method !== 'HEAD') || ((status === 301 || status === 302) && hop.method === 'POST');
  if (!becomesGet) return hop;
  const { 'content-type': _type, 'idempotency-key': _key, ...headers } = hop.headers;
  return { method: 'GET', headers, body: undefined };
}

/**
 * Browsers (and any fetch that follows the standard to the letter) answer `redirect: 'manual'` with an
 * opaque redirect: status 0, no Location, so its target cannot be checked. Node, Bun, Deno and
 * Cloudflare Workers return the 3xx itself. A fetch that followed a redirect despite 'manual' has
 * already sent the key wherever it led; the answer is refused so the caller learns of it.
 */
function checkNotFollowed(response: Response, request: string): void {
  if (response.type === 'opaqueredirect') {
    throw redirectError(response, request, 'REDIRECT_REFUSED', {
      message:
        `${request} was redirected, and this runtime's fetch hides the redirect (an opaque redirect: no status, no Location), ` +
        'so the client cannot check that it stays on the same origin and did not follow; set baseUrl to the address the service redirects to',
      details: {},
    });
  }
  if (response.redirected) {
    const finalOrigin = URL.canParse(response.url) ? originName(new URL(response.url)) : 'an address it does not report';
    throw redirectError(response, request, 'REDIRECT_REFUSED', {
      message:
        `${request} was redirected and the fetch function followed the redirect itself, to ${finalOrigin}, ` +
        "although the client asked for redirect: 'manual'; pass a fetch that honours it, or set baseUrl to the final address",
      details: { targetOrigin: finalOrigin },
    });
  }
}

function targetOf(location: string, current: URL, response: Response, request: string): URL {
  try {
    return new URL(location, current);
  } catch {
    throw redirectError(response, request, 'REDIRECT_REFUSED', {
      message: `${request} was redirected (${response.status}) with a Location that is not a URL, so the client did not follow; check baseUrl`,
      details: {},
    });
  }
}

/** The origin for messages; a scheme such as `data:` has none, so its scheme stands in. */
function originName(url: URL): string {
  return url.origin === 'null' ? url.protocol : url.origin;
}

function redirectError(
  response: Response,
  request: string,
  code: 'REDIRECT_REFUSED' | 'TOO_MANY_REDIRECTS',
  { message, details }: { message: string; details: Record<string, unknown> },
): ServiceError {
  return new ServiceError({ status: response.status, code, message, request, details });
}
