import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createNodeHandler, type NodeRequest, readNodeBody, writeNodeAnswer } from './node-handler';
import { createReceiver } from './receiver';
import { SECRET, envelope, signed } from './test-support';

const servers: http.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function serve(listener: http.RequestListener): Promise<string> {
  const server = http.createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

function post(url: string, input: ReturnType<typeof signed>, init: RequestInit = {}) {
  return fetch(url, {
    method: 'POST',
    body: input.body as Uint8Array<ArrayBuffer>,
    headers: input.headers as Record<string, string>,
    ...init,
  });
}

describe('createNodeHandler', () => {
  it('serves a signed delivery over real HTTP', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const handler = vi.fn();
    receiver.on('message.delivered', handler);
    const base = await serve(createNodeHandler(receiver, { path: '/webhooks' }));
    const response = await post(`${base}/webhooks?source=test`, signed(envelope()));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('answers through receiver.handle when it was replaced or wrapped, not around it', async () => {
    const receiver = createReceiver({ secret: SECRET }).on('message.delivered', () => {});
    const handle = vi.spyOn(receiver, 'handle');
    const wrapped = { ...receiver, handle: vi.fn((input: Parameters<typeof receiver.handle>[0]) => receiver.handle(input)) };
    const spied = await serve(createNodeHandler(receiver));
    const viaWrapper = await serve(createNodeHandler(wrapped));
    expect((await post(spied, signed(envelope()))).status).toBe(200);
    expect(handle).toHaveBeenCalledTimes(1);
    expect((await post(viaWrapper, signed(envelope({ deliveryId: 'wdl_wrapped' })))).status).toBe(200);
    expect(wrapped.handle).toHaveBeenCalledTimes(1);
    expect(handle).toHaveBeenCalledTimes(2);
  });

  it('settles the promise it returns once the answer is written, whether the receiver answered at once or later', async () => {
    const receiver = createReceiver({ secret: SECRET })
      .on('message.delivered', () => {})
      .on('message.failed', () => new Promise((resolve) => setTimeout(resolve, 20)));
    const node = createNodeHandler(receiver);
    const written: boolean[] = [];
    const base = await serve((req, res) => {
      void node(req, res).then(() => written.push(res.writableEnded));
    });
    expect((await post(base, signed(envelope()))).status).toBe(200);
    expect((await post(base, signed(envelope({ event: 'message.failed', deliveryId: 'wdl_later' })))).status).toBe(200);
    await vi.waitFor(() => expect(written).toEqual([true, true]), { timeout: 10_000 });
  });

  it('writeNodeAnswer writes an answer whose headers are frozen', async () => {
    const base = await serve((_req, res) => {
      writeNodeAnswer(res, { status: 202, headers: Object.freeze({ 'content-type': 'application/json' }), body: '{"ok":true}' });
    });
    const response = await fetch(base, { method: 'POST', body: '{}' });
    expect(response.status).toBe(202);
    expect(response.headers.get('content-length')).toBe('11');
    expect(await response.json()).toEqual({ ok: true });
  });

  it("runs the handlers in the caller's async context (AsyncLocalStorage), not the stream's", async () => {
    const requestId = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const receiver = createReceiver({ secret: SECRET }).on('message.delivered', () => void seen.push(requestId.getStore()));
    const node = createNodeHandler(receiver);
    const base = await serve((req, res) => requestId.run('request-1', () => void node(req, res)));
    expect((await post(base, signed(envelope()))).status).toBe(200);
    expect(seen).toEqual(['request-1']);
  });

  it('answers 404 off its path, 405 to GET', async () => {
    const base = await serve(createNodeHandler(createReceiver({ secret: SECRET, logger: false }), { path: '/webhooks' }));
    expect((await post(`${base}/other`, signed(envelope()))).status).toBe(404);
    const get = await fetch(`${base}/webhooks`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it('drops a request whose client went away mid-body: nothing runs, the server goes on serving', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const handler = vi.fn();
    receiver.on('*', handler);
    const node = createNodeHandler(receiver);
    const settled = vi.fn();
    const base = await serve((req, res) => {
      void node(req, res).then(settled);
    });
    const { port } = new URL(base);
    const input = signed(envelope());
    await new Promise<void>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${input.body.byteLength}\r\n`);
        socket.write(`x-service-signature: ${(input.headers as Record<string, string>)['x-service-signature']}\r\n\r\n`);
        socket.write(input.body.subarray(0, 10), () => setTimeout(() => socket.destroy(), 50));
      });
      socket.on('close', () => resolve());
    });
    await vi.waitFor(() => expect(settled).toHaveBeenCalledTimes(1), { timeout: 10_000 }); // the handler's promise ended, no hang
    expect(handler).not.toHaveBeenCalled();
    expect((await post(base, signed(envelope()))).status).toBe(200);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('passes other paths to next() when used as middleware', async () => {
    const handler = createNodeHandler(createReceiver({ secret: SECRET }), { path: '/webhooks' });
    const base = await serve((req, res) => {
      void handler(req, res, () => {
        res.statusCode = 204;
        res.end();
      });
    });
    expect((await fetch(`${base}/health`)).status).toBe(204);
  });

  it('answers 413 to a declared Content-Length over the limit without reading the body', async () => {
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 1024, logger: false });
    const base = await serve(createNodeHandler(receiver));
    const { port } = new URL(base);
    const reply = await new Promise<string>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n{');
      });
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('close', () => resolve(data));
      socket.on('error', () => resolve(data));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toContain('PAYLOAD_TOO_LARGE');
  });

  it('answers 413 to a chunked body with no Content-Length once it passes the limit', async () => {
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 1024, logger: false });
    const base = await serve(createNodeHandler(receiver));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        sent += 1;
        if (sent > 2000) return controller.close();
        controller.enqueue(new Uint8Array(512).fill(0x20));
        await new Promise((resolve) => setTimeout(resolve, 1));
      },
    });
    const response = await fetch(base, { method: 'POST', body, duplex: 'half' } as RequestInit).catch((error: Error) => error);
    if (response instanceof Error) throw response;
    expect(response.status).toBe(413);
    expect(sent).toBeLessThan(2000); // the sender was cut off long before its 1 MB
  });

  it('uses a Buffer a raw body parser left in req.body', async () => {
    const receiver = createReceiver({ secret: SECRET });
    receiver.on('*', () => {});
    const input = signed(envelope());
    const answer = await new Promise<number>((resolve) => {
      const req = { body: Buffer.from(input.body), headers: input.headers, method: 'POST', url: '/' } as unknown as NodeRequest;
      const res = {
        headersSent: false,
        writableEnded: false,
        statusCode: 0,
        writeHead(status: number) {
          res.statusCode = status;
        },
        end() {
          resolve(res.statusCode);
        },
      };
      void createNodeHandler(receiver)(req, res as unknown as http.ServerResponse);
    });
    expect(answer).toBe(200);
  });

  it('answers 500 CONFIGURATION_ERROR at once when a JSON parser already consumed the body', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    const node = createNodeHandler(receiver);
    const base = await serve((req, res) => {
      // what express.json() does: read the stream, set req.body and req._body
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        Object.assign(req, { body: JSON.parse(text), _body: true });
        void node(req, res);
      });
    });
    const response = await post(base, signed(envelope()));
    expect(response.status).toBe(500);
    const { error } = await response.json();
    expect(error.code).toBe('CONFIGURATION_ERROR');
    expect(error.message).toMatch(/before any JSON\/text body parser/);
  });

  it('gives two reads of the same streaming request the same bytes', async () => {
    const reads: string[] = [];
    const base = await serve((req, res) => {
      void Promise.all([readNodeBody(req, 1_000), readNodeBody(req, 1_000)]).then((bodies) => {
        for (const body of bodies) reads.push(Buffer.from(body).toString('utf8'));
        res.end();
      });
    });
    await fetch(base, { method: 'POST', body: '{"a":1}' });
    expect(reads).toEqual(['{"a":1}', '{"a":1}']);
  });

  it('refuses, with 413, a body over the limit to each of two reads of the same request', async () => {
    const outcomes: unknown[] = [];
    const base = await serve((req, res) => {
      const read = () =>
        readNodeBody(req, 4).then(
          () => 'read',
          (error: { status: number }) => error.status,
        );
      void Promise.all([read(), read()]).then((both) => {
        outcomes.push(...both);
        res.end();
      });
    });
    // Chunked, no declared length: both reads meet the limit while the body streams in.
    const request = http.request(base, { method: 'POST' });
    request.on('error', () => {});
    request.write('x'.repeat(32));
    request.end('x'.repeat(32));
    await vi.waitFor(() => expect(outcomes).toEqual([413, 413]), { timeout: 10_000 });
  });

  it('refuses a string body left by a text parser', async () => {
    await expect(readNodeBody({ body: '{}', headers: {} } as unknown as NodeRequest, 100)).rejects.toMatchObject({
      code: 'CONFIGURATION_ERROR',
    });
  });
});
