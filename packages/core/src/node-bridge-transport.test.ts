// The bridge's transport: the body-read time limit (408) and the lingering close after an answer given
// before the body was read whole (413, 408, 405, 404), over raw sockets on loopback.
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readRequestBody } from './body';
import { createNodeHandler, type NodeHandlerOptions } from './node-handler';
import { createReceiver } from './receiver';
import { envelope, SECRET, signed } from './test-support';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

async function serve(
  receiverOptions: { maxBodyBytes?: number; bodyTimeoutMs?: number },
  options: NodeHandlerOptions = {},
): Promise<number> {
  // Every test here is about a refusal: no notes on the console.
  const receiver = createReceiver({ secret: SECRET, ...receiverOptions, logger: false });
  receiver.on('*', () => {});
  const server = http.createServer(createNodeHandler(receiver, options));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

interface Raw {
  text: string;
  error?: string;
  /** Body bytes the client handed to its socket before the connection ended. */
  sent: number;
}

/**
 * Writes `head` and then `bodyBytes` bytes (in 64 KiB writes, `gapMs` apart) before reading anything,
 * as urllib does; resolves once the server closes or `idleMs` pass without a byte.
 */
function eager(port: number, head: string, bodyBytes: number, options: { gapMs?: number; idleMs?: number } = {}): Promise<Raw> {
  const { gapMs = 0, idleMs = 3_000 } = options;
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.pause();
    let text = '';
    let sent = 0;
    let error: string | undefined;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      clearTimeout(idle);
      socket.destroy();
      resolve({ text, error, sent });
    };
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      clearTimeout(idle);
      idle = setTimeout(finish, idleMs);
    });
    socket.on('close', finish);
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error ??= e.code;
    });
    socket.on('connect', async () => {
      socket.write(head);
      const slice = Buffer.alloc(64 * 1024, 0x20);
      for (let left = bodyBytes; left > 0 && !socket.destroyed; left -= slice.byteLength) {
        const part = left >= slice.byteLength ? slice : slice.subarray(0, left);
        sent += part.byteLength;
        if (!socket.write(part)) await new Promise((r) => socket.once('drain', r));
        if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      }
      // Read only once everything is handed to the kernel.
      socket.write('', () => {
        socket.resume();
        idle = setTimeout(finish, idleMs);
      });
    });
  });
}

const post = (length: number, path = '/') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
const MB = 1024 * 1024;

describe('the lingering close', () => {
  it('a client that writes a body over the limit before reading gets the 413 (declared and streamed)', async () => {
    const port = await serve({ maxBodyBytes: 1024 });
    const declared = await eager(port, post(8 * MB), 8 * MB);
    expect(declared.error).toBeUndefined();
    expect(declared.text).toMatch(/^HTTP\/1\.1 413/);
    expect(declared.text).toContain('"code":"PAYLOAD_TOO_LARGE"');
    expect(declared.text.toLowerCase()).toContain('connection: close');
    const chunked = await eager(port, 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n800000\r\n', 8 * MB);
    expect(chunked.error).toBeUndefined();
    expect(chunked.text).toMatch(/^HTTP\/1\.1 413/);
  });

  it('a 405 or 404 to a request with a body lingers and closes; a GET without one keeps the connection', async () => {
    const port = await serve({}, { path: '/webhooks' });
    const put = await eager(port, post(4 * MB, '/webhooks').replace('POST', 'PUT'), 4 * MB);
    expect(put.error).toBeUndefined();
    expect(put.text).toMatch(/^HTTP\/1\.1 405/);
    expect(put.text.toLowerCase()).toContain('connection: close');
    const elsewhere = await eager(port, post(4 * MB, '/elsewhere'), 4 * MB);
    expect(elsewhere.error).toBeUndefined();
    expect(elsewhere.text).toMatch(/^HTTP\/1\.1 404/);
    const get = await fetch(`http://127.0.0.1:${port}/webhooks`);
    expect(get.status).toBe(405);
    expect(get.headers.get('connection')).toBe('keep-alive');
  });

  it('stops at linger.maxBytes: past it the connection is closed while the client still sends', async () => {
    const port = await serve({ maxBodyBytes: 1024 }, { linger: { maxBytes: 256 * 1024 } });
    const raw = await eager(port, post(32 * MB), 32 * MB);
    expect(raw.error).toMatch(/EPIPE|ECONNRESET/);
  });

  it('stops at linger.maxMs: a client still sending after it is cut off', async () => {
    const port = await serve({ maxBodyBytes: 1024 }, { linger: { maxMs: 300 } });
    // 4 MiB at 64 KiB every 20 ms: about 1.3 s of sending, cut off after about 0.3 s. What is checked
    // is that the client could not send it all (a slower machine only sends less), not a time.
    const raw = await eager(port, post(4 * MB), 4 * MB, { gapMs: 20 });
    expect(raw.error).toMatch(/EPIPE|ECONNRESET/);
    expect(raw.sent).toBeLessThan(4 * MB);
  });

  it('stops at linger.idleMs: a client that goes silent is let go', async () => {
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 1024, logger: false });
    const server = http.createServer(createNodeHandler(receiver, { linger: { idleMs: 200, maxMs: 60_000 } }));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const closed = new Promise<number>((resolve) => server.once('connection', (socket) => socket.once('close', () => resolve(Date.now()))));
    let reply = '';
    // allowHalfOpen: the client keeps its side open after the server's FIN, silent, as a stalled sender would.
    const socket = net.connect({ port: (server.address() as net.AddressInfo).port, host: '127.0.0.1', allowHalfOpen: true });
    socket.on('data', (chunk) => (reply += chunk.toString()));
    socket.on('error', () => {});
    socket.write(post(8 * MB));
    await new Promise<void>((resolve) => socket.write(Buffer.alloc(MB, 0x20), () => resolve()));
    const lastByte = Date.now();
    const ms = (await closed) - lastByte;
    socket.destroy();
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(ms).toBeGreaterThanOrEqual(150);
    // Let go by the idle limit, not by maxMs (60 s); the margin is for a loaded machine, not a timing.
    expect(ms).toBeLessThan(20_000);
  });

  it('answers without a lingering close when turned off (linger.maxMs: 0)', async () => {
    const port = await serve({ maxBodyBytes: 1024 }, { linger: { maxMs: 0 } });
    const raw = await eager(port, post(32 * MB), 32 * MB);
    expect(raw.error).toMatch(/EPIPE|ECONNRESET/);
  });
});

describe('the body-read time limit (bodyTimeoutMs)', () => {
  it('a body that stalls half-way gets 408 REQUEST_TIMEOUT, JSON, connection: close, once the limit has passed', async () => {
    const port = await serve({ bodyTimeoutMs: 200 });
    const started = Date.now();
    const reply = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(`${post(1000)}{"event":`));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
    });
    const ms = Date.now() - started;
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    expect(reply).toContain('"code":"REQUEST_TIMEOUT"');
    expect(reply).toContain('"limitMs":200');
    expect(reply.toLowerCase()).toContain('connection: close');
    expect(ms).toBeGreaterThanOrEqual(200);
    // Answered by the body-read limit, not by node's own request timeout (300 s) or never.
    expect(ms).toBeLessThan(20_000);
  });

  it("the handler's own bodyTimeoutMs (AdapterOptions) takes the place of the receiver's, and must be positive", async () => {
    const port = await serve({ bodyTimeoutMs: 60_000 }, { bodyTimeoutMs: 200 });
    const reply = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(`${post(1000)}{"event":`));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    expect(reply).toContain('"limitMs":200');
    const receiver = createReceiver({ secret: SECRET, logger: false });
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createNodeHandler(receiver, { bodyTimeoutMs: bad })).toThrow(
        new RangeError(`createNodeHandler: bodyTimeoutMs must be a positive number of milliseconds, got ${bad}`),
      );
    }
  });

  it('a body that arrives in time is delivered, however many chunks it takes', async () => {
    const port = await serve({ bodyTimeoutMs: 1_000 });
    const input = signed(envelope());
    const body = Buffer.from(input.body);
    const headers = input.headers as Record<string, string>;
    const reply = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', async () => {
        socket.write(
          `POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${body.byteLength}\r\nx-service-signature: ${headers['x-service-signature']}\r\n\r\n`,
        );
        for (let at = 0; at < body.byteLength; at += 40) {
          socket.write(body.subarray(at, at + 40));
          await new Promise((r) => setTimeout(r, 20));
        }
      });
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 200/);
  });

  it('readRequestBody: a Web body that stalls (streamed or with a Content-Length) is refused with 408', async () => {
    const stalled = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"event":'));
        },
      });
    const streamed = new Request('http://x/', { method: 'POST', body: stalled(), duplex: 'half' } as RequestInit);
    await expect(readRequestBody(streamed, 1024, 100)).rejects.toMatchObject({ code: 'REQUEST_TIMEOUT', details: { limitMs: 100 } });
    const declared = new Request('http://x/', {
      method: 'POST',
      body: stalled(),
      headers: { 'content-length': '100' },
      duplex: 'half',
    } as RequestInit);
    await expect(readRequestBody(declared, 1024, 100)).rejects.toMatchObject({ code: 'REQUEST_TIMEOUT' });
    // Without a limit (or in time) it reads as before.
    const whole = new Request('http://x/', { method: 'POST', body: '{}' });
    expect(new TextDecoder().decode(await readRequestBody(whole, 1024, 100))).toBe('{}');
  });
});
