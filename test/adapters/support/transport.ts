// The transport scenarios every adapter that owns node's connection must pass, over raw sockets: early
// answers reach a client that writes its whole body before reading (lingering close), a body that
// stalls gets 408 within the body-read time limit, and other methods get hookline's 405. Plus the raw
// clients, the CPU load and the RSS reading they use.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';

import { SLOW_BODY_TIMEOUT_MS } from './test-receiver';

export { SLOW_BODY_TIMEOUT_MS };
/** `pnpm test:long` (HOOKLINE_LONG=1): the 200 eager posts per adapter instead of 20. */
export const LONG = process.env.HOOKLINE_LONG === '1';

/** One adapter served on 127.0.0.1, as the transport scenarios see it. */
export interface TransportTarget {
  port: number;
  /** Where deliveries go: a receiver with the default limits, or `maxBodyBytes`. */
  path: string;
  /** A route whose receiver has `bodyTimeoutMs: SLOW_BODY_TIMEOUT_MS`. */
  slowPath: string;
  /** The body limit of the receiver at `path`. */
  maxBodyBytes: number;
  /** The server's process, when it has one of its own: its RSS is read from /proc. */
  pid?: number;
  /** Most the server's RSS may grow during the eager posts, in MB (its GC's headroom; Next's is larger). */
  rssBoundMb?: number;
  /** Whether hookline owns the connection (node's req/res), so the lingering close is its to give. */
  lingers: boolean;
  /** A path the adapter answers with hookline's 404 (the node:http bridge with `path`). */
  notFoundPath?: string;
}

/** The resident set size of a process, in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) * 1024;
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Busy loops in child processes, one per core of the CI machine; each ends by itself after 10 min. */
export function loadCpu(loops = 2): { stop(): Promise<void> } {
  const children = Array.from({ length: loops }, () =>
    spawn(process.execPath, ['-e', 'const end = Date.now() + 600_000; while (Date.now() < end) {}'], { stdio: 'ignore' }),
  );
  return { stop: async () => void (await Promise.all(children.map(stop))) };
}

/** What a raw-socket client read back. */
export interface RawAnswer {
  /** The status of the response, when one was read. */
  status?: number;
  headers: Record<string, string>;
  /** Its JSON body, when it was read whole. */
  json?: { error?: { code: string; message: string; details?: Record<string, unknown> } } & Record<string, unknown>;
  /** The socket error the client met instead (ECONNRESET, EPIPE…), or 'client timeout'. */
  error?: string;
  /** Milliseconds from connect to the answer (or the error). */
  ms: number;
}

function parseAnswer(raw: Buffer): Pick<RawAnswer, 'status' | 'json' | 'headers'> {
  const headers: Record<string, string> = {};
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) return { headers };
  const [statusLine = '', ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = raw.subarray(end + 4);
  const length = Number(headers['content-length']);
  let json: RawAnswer['json'];
  // Content-Length or chunked (Next answers chunked): a body that parses as JSON is complete.
  const text = Number.isFinite(length)
    ? body.byteLength >= length
      ? body.subarray(0, length).toString('utf8')
      : undefined
    : /^[0-9a-f]+\r\n([\s\S]*?)\r\n0\r\n\r\n/i.exec(body.toString('utf8'))?.[1];
  if (text !== undefined) {
    try {
      json = JSON.parse(text);
    } catch {}
  }
  return { status: Number.isFinite(status) ? status : undefined, headers, json };
}

/** A raw connection that collects the answer; `finish` destroys it and resolves. */
function rawConnection(port: number, timeoutMs: number, onConnect: (socket: ReturnType<typeof connect>) => void): Promise<RawAnswer> {
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseAnswer(Buffer.concat(chunks)), error, ms: Date.now() - started });
    };
    const timer = setTimeout(() => {
      error ??= 'client timeout';
      finish();
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (parseAnswer(Buffer.concat(chunks)).json !== undefined) finish();
    });
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error ??= e.code ?? e.message;
      finish();
    });
    socket.on('connect', () => onConnect(socket));
  });
}

function head(method: string, path: string, headers: Record<string, string>): string {
  const lines = Object.entries({ host: '127.0.0.1', 'content-type': 'application/json', ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `${method} ${path} HTTP/1.1\r\n${lines}\r\n`;
}

const SLICE = Buffer.alloc(256 * 1024, 0x20);

/**
 * Sends a request with a body of `bodyBytes` spaces (with a Content-Length, or chunked) and writes all
 * of it before reading anything, like Python's urllib or curl without `Expect: 100-continue`: the
 * socket is paused until the last byte is handed to the kernel. A server that closes while the client
 * still sends makes it meet a reset (ECONNRESET, EPIPE) and lose the answer.
 */
export function eagerPost(
  port: number,
  options: { path: string; method?: string; bodyBytes: number; chunked?: boolean; timeoutMs?: number },
): Promise<RawAnswer> {
  const { path, method = 'POST', bodyBytes, chunked = false, timeoutMs = 60_000 } = options;
  return rawConnection(port, timeoutMs, (socket) => {
    socket.pause();
    const framing: Record<string, string> = chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(bodyBytes) };
    const parts: Buffer[] = [];
    for (let left = bodyBytes; left > 0; left -= SLICE.byteLength) {
      const slice = left >= SLICE.byteLength ? SLICE : SLICE.subarray(0, left);
      parts.push(chunked ? Buffer.concat([Buffer.from(`${slice.byteLength.toString(16)}\r\n`), slice, Buffer.from('\r\n')]) : slice);
    }
    if (chunked) parts.push(Buffer.from('0\r\n\r\n'));
    socket.write(head(method, path, framing));
    let next = 0;
    const pump = () => {
      while (next < parts.length && !socket.destroyed) {
        const part = parts[next++] as Buffer;
        const last = next === parts.length;
        if (!socket.write(part, last ? () => socket.resume() : undefined)) return void socket.once('drain', pump);
      }
    };
    if (parts.length === 0) socket.resume();
    pump();
  });
}

/**
 * Sends the request head and `sentBytes` of a body declared `declaredBytes` long (chunked when
 * undefined), then stalls: only a server with a body-read time limit answers.
 */
export function stalledPost(
  port: number,
  options: { path: string; declaredBytes?: number; sentBytes: number; timeoutMs?: number },
): Promise<RawAnswer> {
  const { path, declaredBytes, sentBytes, timeoutMs = 30_000 } = options;
  return rawConnection(port, timeoutMs, (socket) => {
    const chunked = declaredBytes === undefined;
    socket.write(head('POST', path, chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(declaredBytes) }));
    if (sentBytes === 0) return;
    const body = Buffer.alloc(sentBytes, 0x20);
    socket.write(chunked ? Buffer.concat([Buffer.from(`${sentBytes.toString(16)}\r\n`), body, Buffer.from('\r\n')]) : body);
  });
}

const MB = 1024 * 1024;

/**
 * Runs the transport scenarios against the target `start` resolves (called once). `lingers: false`
 * (a framework that writes the answer and owns the connection, as Next's App Router does) leaves out
 * the eager-client scenario, which only a lingering close can pass; that limit is documented.
 */
export function describeTransportScenarios(
  name: string,
  start: () => TransportTarget | Promise<TransportTarget>,
  options: { lingers: boolean } = { lingers: true },
): void {
  describe(`${name}: transport`, () => {
    let target: TransportTarget | undefined;
    const get = async () => {
      target ??= await start();
      return target;
    };

    it.each(['GET', 'PUT', 'DELETE'])('%s → 405 with Allow: POST and the JSON error body, from hookline', async (method) => {
      const { port, path } = await get();
      const response = await fetch(`http://127.0.0.1:${port}${path}`, { method, body: method === 'GET' ? undefined : '{}' });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await response.json()) as { error: { code: string } };
      expect(body.error.code).toBe('METHOD_NOT_ALLOWED');
    });

    it.each([
      ['a Content-Length body half sent', { declaredBytes: 64 * 1024, sentBytes: 32 * 1024 }],
      ['a chunked body, one chunk sent', { sentBytes: 16 * 1024 }],
      ['the head only', { declaredBytes: 1024, sentBytes: 0 }],
    ] as const)('%s, then silence → 408 REQUEST_TIMEOUT (JSON) once bodyTimeoutMs has passed', async (_, shape) => {
      const { port, slowPath, lingers } = await get();
      const answer = await stalledPost(port, { path: slowPath, ...shape });
      expect(answer.error).toBeUndefined();
      expect(answer.status).toBe(408);
      expect(answer.json?.error).toMatchObject({ code: 'REQUEST_TIMEOUT', details: { limitMs: SLOW_BODY_TIMEOUT_MS } });
      if (lingers) expect(answer.headers.connection).toBe('close');
      expect(answer.ms).toBeGreaterThanOrEqual(SLOW_BODY_TIMEOUT_MS - 5); // the client's clock started first
      expect(answer.ms).toBeLessThan(SLOW_BODY_TIMEOUT_MS + 2_000);
    });

    if (options.lingers) {
      it(
        `eager clients (whole body written before reading) read every early answer under CPU load: ${LONG ? 200 : 20} posts of 2 and 16 MB, memory flat`,
        async () => {
          const { port, path, pid, notFoundPath, maxBodyBytes, rssBoundMb = 96 } = await get();
          expect(2 * MB).toBeGreaterThan(maxBodyBytes);
          const posts = LONG ? 200 : 20;
          // Warm up (first connections, first buffers), then read the baseline.
          for (const chunked of [false, true]) await eagerPost(port, { path, bodyBytes: 2 * MB, chunked });
          const baseline = pid === undefined ? 0 : rssOf(pid);
          let peak = baseline;
          const sampler = setInterval(() => {
            if (pid !== undefined) peak = Math.max(peak, rssOf(pid));
          }, 50);
          const load = loadCpu(2);
          const outcomes: string[] = [];
          try {
            // 2 and 16 MB, with a Content-Length (413 before a byte is read) and chunked (413 while
            // streaming), four at a time; then the other early answers: 405 and 404 to large bodies.
            const requests: Parameters<typeof eagerPost>[1][] = Array.from({ length: posts }, (_, i) => ({
              path,
              bodyBytes: (i % 2 === 0 ? 2 : 16) * MB,
              chunked: i % 4 >= 2,
            }));
            requests.push({ path, method: 'PUT', bodyBytes: 16 * MB }, { path, method: 'PATCH', bodyBytes: 2 * MB, chunked: true });
            if (notFoundPath !== undefined)
              requests.push({ path: notFoundPath, bodyBytes: 16 * MB }, { path: notFoundPath, bodyBytes: 2 * MB, chunked: true });
            let next = 0;
            await Promise.all(
              Array.from({ length: 4 }, async () => {
                while (next < requests.length) {
                  const request = requests[next++] as Parameters<typeof eagerPost>[1];
                  const answer = await eagerPost(port, request);
                  outcomes.push(
                    `${request.method ?? 'POST'} ${request.path} ${answer.status ?? answer.error} ${answer.json?.error?.code ?? 'no JSON'}`,
                  );
                }
              }),
            );
          } finally {
            clearInterval(sampler);
            await load.stop();
          }
          const unread = outcomes.filter((outcome) => !/ (413 PAYLOAD_TOO_LARGE|405 METHOD_NOT_ALLOWED|404 NOT_FOUND)$/.test(outcome));
          expect(unread, 'every eager client read its status line and JSON body').toEqual([]);
          const posts413 = outcomes.filter((outcome) => outcome.startsWith(`POST ${path} 413`));
          expect(posts413).toHaveLength(posts);
          if (pid !== undefined) {
            // 180 MB went through the server (1.8 GB in the long run): its RSS settles on the GC's headroom
            // for the discarded chunks (35-40 MB for the node adapters, 55-70 MB for Next here), whatever
            // the count; keeping the bodies would pass the bound many times over.
            const growth = (peak - baseline) / MB;
            expect(growth, `RSS grew ${growth.toFixed(0)} MB`).toBeLessThan(rssBoundMb);
          }
        },
        LONG ? 30 * 60_000 : 180_000,
      );
    }
  });
}
