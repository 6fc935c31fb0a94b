import { afterEach, describe, expect, it } from 'vitest';
import { createServiceClient, type ServiceClientOptions } from './create-service-client';
import { answerJson, answerRedirect, type LocalServer, startLocalServer } from './local-server.test-support';
import { ServiceError } from './service-error';

// Real servers on 127.0.0.1: two ports are two origins. The key must reach the base URL's origin only.
const API_KEY = `sk_live_redirect_${crypto.randomUUID().slice(0, 8)}`;
const CREATED = { id: 'whk_moved', url: 'https://example.com/hooks', events: ['message.read'], isActive: true, signingSecret: 'whsec_x' };
const INPUT = { url: 'https://example.com/hooks', events: ['message.read'] } as const;

const servers: LocalServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function server(answer: Parameters<typeof startLocalServer>[0]): Promise<LocalServer> {
  const started = await startLocalServer(answer);
  servers.push(started);
  return started;
}

let waits: number[] = [];
function client(baseUrl: string, options: Partial<ServiceClientOptions> = {}) {
  waits = [];
  return createServiceClient({ apiKey: API_KEY, baseUrl, sleep: async (ms) => void waits.push(ms), random: () => 0.5, ...options });
}

async function failure(call: Promise<unknown>): Promise<ServiceError> {
  const error = await call.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!ServiceError.is(error)) throw new Error(`expected a ServiceError, got ${String(error)}`);
  return error;
}

describe('redirects within the base URL origin', () => {
  it('follows a 307 with the same method, body, key and idempotency key', async () => {
    const service = await server((request, response) => {
      if (request.url === '/v1/webhooks') answerRedirect(response, 307, '/v1/moved/webhooks');
      else answerJson(response, 201, CREATED);
    });
    expect(await client(service.origin).webhooks.create(INPUT)).toEqual(CREATED);
    const [first, moved] = service.requests;
    expect(service.requests).toHaveLength(2);
    expect(moved).toMatchObject({ method: 'POST', url: '/v1/moved/webhooks', body: first!.body });
    expect(moved!.headers['x-api-key']).toBe(API_KEY);
    expect(moved!.headers['content-type']).toBe('application/json');
    expect(moved!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
  });

  it('changes the method as fetch does: 303 and a POST under 301/302 become a GET without body; 308 and a PATCH under 301 keep both', async () => {
    const cases: { status: number; call: 'create' | 'update'; method: string; withBody: boolean }[] = [
      { status: 303, call: 'create', method: 'GET', withBody: false },
      { status: 302, call: 'create', method: 'GET', withBody: false },
      { status: 301, call: 'create', method: 'GET', withBody: false },
      { status: 308, call: 'create', method: 'POST', withBody: true },
      { status: 301, call: 'update', method: 'PATCH', withBody: true },
      { status: 303, call: 'update', method: 'GET', withBody: false },
    ];
    for (const { status, call, method, withBody } of cases) {
      const service = await server((request, response) => {
        if (!request.url.startsWith('/moved')) answerRedirect(response, status, `/moved${request.url}`);
        else answerJson(response, 200, CREATED);
      });
      const webhooks = client(`${service.origin}/`).webhooks;
      await (call === 'create' ? webhooks.create(INPUT) : webhooks.update('whk_1', { isActive: false }));
      const moved = service.requests[1]!;
      const label = `${status} after ${call}`;
      expect(moved.method, label).toBe(method);
      expect(moved.headers['x-api-key'], label).toBe(API_KEY);
      expect(moved.body === '', label).toBe(!withBody);
      expect(moved.headers['content-type'] !== undefined, label).toBe(withBody);
      if (!withBody) expect(moved.headers['idempotency-key'], label).toBeUndefined();
    }
  });

  it('bounds a redirect loop with maxRedirects (5 by default), and does not retry it', async () => {
    const loop = await server((request, response) => answerRedirect(response, 302, `${request.url.split('?')[0]}?hop=${Date.now()}`));
    const error = await failure(client(loop.origin).webhooks.list());
    expect(error).toMatchObject({ status: 302, code: 'TOO_MANY_REDIRECTS', request: 'GET /v1/webhooks', details: { maxRedirects: 5 } });
    expect(error.message).toMatch(/more than maxRedirects \(5\) times/);
    expect(loop.requests).toHaveLength(6); // the first request and 5 redirects followed
    expect(waits).toEqual([]);

    const none = await failure(client(loop.origin, { maxRedirects: 0 }).webhooks.list());
    expect(none.code).toBe('TOO_MANY_REDIRECTS');
    expect(loop.requests).toHaveLength(7);
  });

  it('reads a 300 or a 3xx without Location as an answer, not a redirect', async () => {
    const service = await server((_request, response) =>
      answerJson(response, 300, { error: { code: 'MULTIPLE_CHOICES', message: 'pick one' } }),
    );
    const error = await failure(client(service.origin).webhooks.list());
    expect(error).toMatchObject({ status: 300, code: 'MULTIPLE_CHOICES' });
    expect(service.requests).toHaveLength(1);
  });
});

describe('redirects to another origin', () => {
  it('refuses a 307 to another port: that origin receives no connection, the error names it and not the key, no retry', async () => {
    const other = await server((_request, response) => answerJson(response, 201, CREATED));
    const service = await server((_request, response) => answerRedirect(response, 307, `${other.origin}/v1/webhooks`));
    const error = await failure(client(service.origin).webhooks.create(INPUT));
    expect(error).toMatchObject({
      status: 307,
      code: 'REDIRECT_REFUSED',
      request: 'POST /v1/webhooks',
      details: { targetOrigin: other.origin },
    });
    expect(error.message).toContain(`redirected (307) to another origin, ${other.origin}`);
    expect(error.message).toContain(`only to ${service.origin}`);
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain(API_KEY);
    expect(other.connections).toBe(0);
    expect(other.requests).toEqual([]);
    expect(service.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('refuses another scheme or host on the same port, and a redirect after a followed one', async () => {
    const service = await server((request, response) => {
      if (request.url === '/v1/webhooks') answerRedirect(response, 308, '/v1/step');
      else if (request.url === '/v1/step') answerRedirect(response, 308, `http://localhost:${service.port}/v1/webhooks`);
      else answerRedirect(response, 308, `https://127.0.0.1:${service.port}/v1/webhooks`);
    });
    const byHost = await failure(client(service.origin).webhooks.list());
    expect(byHost).toMatchObject({ code: 'REDIRECT_REFUSED', details: { targetOrigin: `http://localhost:${service.port}` } });
    expect(service.requests.map((request) => request.url)).toEqual(['/v1/webhooks', '/v1/step']);

    const byScheme = await failure(client(service.origin).webhooks.update('whk_1', { isActive: true }));
    expect(byScheme).toMatchObject({ code: 'REDIRECT_REFUSED', details: { targetOrigin: `https://127.0.0.1:${service.port}` } });
  });

  it('refuses a redirect it cannot check: an opaque one (as a browser fetch returns it) or one a fetch followed on its own', async () => {
    const service = await server((request, response) => {
      if (request.url === '/v1/webhooks') answerRedirect(response, 302, '/v1/moved');
      else answerJson(response, 200, { data: [] });
    });
    // What a browser's fetch gives for redirect: 'manual': the 3xx hidden behind type 'opaqueredirect', status 0.
    const browserLike: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (response.status < 300 || response.status > 399) return response;
      return Object.defineProperties(response, {
        type: { value: 'opaqueredirect' },
        status: { value: 0 },
        headers: { value: new Headers() },
      });
    };
    const opaque = await failure(client(service.origin, { fetch: browserLike }).webhooks.list());
    expect(opaque).toMatchObject({ status: 0, code: 'REDIRECT_REFUSED' });
    expect(opaque.message).toContain('opaque redirect');
    expect(service.requests).toHaveLength(1);

    const following: typeof fetch = (input, init) => fetch(input, { ...init, redirect: 'follow' });
    const followed = await failure(client(service.origin, { fetch: following }).webhooks.list());
    expect(followed).toMatchObject({ status: 200, code: 'REDIRECT_REFUSED', details: { targetOrigin: service.origin } });
    expect(followed.message).toContain("redirect: 'manual'");
  });
});

it('refuses a maxRedirects that is not a whole number ≥ 0', () => {
  for (const maxRedirects of [-1, 1.5, Number.NaN]) {
    expect(() => client('https://api.example.com', { maxRedirects })).toThrow(/maxRedirects must be a whole number ≥ 0/);
  }
});
