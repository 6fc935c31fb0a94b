import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceClient, type ServiceClientOptions } from './create-service-client';
import { answerJson, type LocalServer, startLocalServer } from './local-server.test-support';
import { ServiceError } from './service-error';

// Real servers on 127.0.0.1 that stream answers far larger than the bound, and record how much they
// managed to write before the client cut the connection.
const MiB = 1024 * 1024;
const HUGE = 512 * MiB;

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
  return createServiceClient({
    apiKey: 'sk_live_bounded',
    baseUrl,
    sleep: async (ms) => void waits.push(ms),
    random: () => 0.5,
    ...options,
  });
}

async function failure(call: Promise<unknown>): Promise<ServiceError> {
  const error = await call.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!ServiceError.is(error)) throw new Error(`expected a ServiceError, got ${String(error)}`);
  return error;
}

interface Stream {
  written: number;
  finished: boolean;
  /** Resolves once the connection closed, with what had been written by then. */
  closed: Promise<{ written: number; finished: boolean }>;
}

/**
 * Writes `total` bytes of a JSON string in 64 KiB chunks, waiting for 'drain' as a well-behaved server
 * does: what it has written is what the client let it write (plus the socket buffers).
 */
function streamJson(response: ServerResponse, status: number, total: number, headers: Record<string, string | number> = {}): Stream {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const stream = { written: 0, finished: false } as Stream;
  stream.closed = new Promise((resolve) => response.on('close', () => resolve({ written: stream.written, finished: stream.finished })));
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.write('"');
  const pump = () => {
    while (stream.written < total - 2) {
      if (response.destroyed) return;
      stream.written += chunk.length;
      if (!response.write(chunk)) return void response.once('drain', pump);
    }
    stream.finished = true;
    response.end('"');
  };
  pump();
  return stream;
}

/** The streams a server started, in order. */
function streamingServer(status: number, total: number, headers?: Record<string, string | number>) {
  const streams: Stream[] = [];
  return {
    streams,
    start: () => server((_request, response) => void streams.push(streamJson(response, status, total, headers))),
  };
}

describe('maxResponseBytes', () => {
  it('cancels a chunked answer far over the bound once past it: RESPONSE_TOO_LARGE, one request, the server cut off early', async () => {
    const huge = streamingServer(200, HUGE);
    const service = await huge.start();
    const error = await failure(client(service.origin, { maxResponseBytes: MiB }).webhooks.list());
    expect(error).toMatchObject({
      status: 200,
      code: 'RESPONSE_TOO_LARGE',
      request: 'GET /v1/webhooks',
      details: { maxResponseBytes: MiB },
    });
    expect(error.message).toContain(`over maxResponseBytes (${MiB} bytes)`);
    expect(error.message).toContain('raise maxResponseBytes');
    expect(service.requests).toHaveLength(1);
    expect(waits).toEqual([]);
    // The connection was closed with the answer unfinished: what was written is the bound plus the
    // socket and stream buffers, a few MiB, not the 512 MiB a buffering client would have pulled.
    const { written, finished } = await huge.streams[0]!.closed;
    expect(finished).toBe(false);
    expect(written).toBeLessThan(64 * MiB);
  });

  it('refuses a Content-Length over the bound before reading, even on a 503 (not retried)', async () => {
    const declared = streamingServer(503, HUGE, { 'content-length': HUGE, 'x-request-id': 'req_large' });
    const service = await declared.start();
    const error = await failure(
      client(service.origin, { maxResponseBytes: MiB }).webhooks.create({ url: 'https://example.com/h', events: ['message.read'] }),
    );
    expect(error).toMatchObject({
      status: 503,
      code: 'RESPONSE_TOO_LARGE',
      requestId: 'req_large',
      details: { maxResponseBytes: MiB, contentLength: HUGE },
    });
    expect(error.message).toContain(`declares ${HUGE} bytes (Content-Length)`);
    expect(service.requests).toHaveLength(1);
    expect(waits).toEqual([]);
    const { written, finished } = await declared.streams[0]!.closed;
    expect(finished).toBe(false);
    expect(written).toBeLessThan(64 * MiB);
  });

  it('reads an answer of exactly the bound and refuses one byte more, with and without Content-Length', async () => {
    const bound = 100_000;
    const padding = bound - JSON.stringify({ data: [], pad: '' }).length;
    const exact = JSON.stringify({ data: [], pad: 'x'.repeat(padding) });
    expect(Buffer.byteLength(exact)).toBe(bound);
    for (const declareLength of [true, false]) {
      const service = await server((request, response) => {
        const body = request.url.endsWith('/whk_over/deliveries') ? `${exact} ` : exact;
        const headers = declareLength ? { 'content-length': Buffer.byteLength(body) } : { 'transfer-encoding': 'chunked' };
        response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(body);
      });
      const bounded = client(service.origin, { maxResponseBytes: bound });
      expect((await bounded.webhooks.list()).pad).toHaveLength(padding);
      const over = await failure(bounded.webhooks.deliveries('whk_over'));
      expect(over.code, `Content-Length: ${declareLength}`).toBe('RESPONSE_TOO_LARGE');
    }
  });

  it('is 10 MiB by default, for the decoded bytes of a compressed answer too', async () => {
    const { gzipSync } = await import('node:zlib');
    const body = JSON.stringify({ data: [], pad: 'x'.repeat(10 * MiB) }); // just over 10 MiB, ~10 KiB gzipped
    const zipped = gzipSync(body);
    const service = await server((_request, response) => {
      response
        .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': zipped.length })
        .end(zipped);
    });
    const error = await failure(client(service.origin).webhooks.list());
    expect(error).toMatchObject({ code: 'RESPONSE_TOO_LARGE', details: { maxResponseBytes: 10 * MiB } });
    expect(error.message).toContain('went past it while being read');

    const small = await server((_request, response) => answerJson(response, 200, { data: [{ id: 'whk_1' }] }));
    expect((await client(small.origin).webhooks.list()).data).toEqual([{ id: 'whk_1' }]);
  });

  it('refuses a maxResponseBytes that is not a whole number ≥ 1', () => {
    for (const maxResponseBytes of [0, -1, 1.5, Number.POSITIVE_INFINITY]) {
      expect(() => client('https://api.example.com', { maxResponseBytes })).toThrow(/maxResponseBytes must be a whole number of bytes ≥ 1/);
    }
  });
});
