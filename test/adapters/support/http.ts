// Small HTTP clients over node:http, so the oversize scenarios control exactly what is sent.
import { request } from 'node:http';

/** A parsed answer. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: {
    ok?: boolean;
    duplicate?: boolean;
    unhandled?: boolean;
    error?: { code: string; message: string; details?: Record<string, unknown> };
  };
}

/** POSTs `body` with `headers` and parses the JSON answer. */
export async function post(url: string, body: Uint8Array | string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body), headers });
  const text = await response.text();
  return { status: response.status, headers: Object.fromEntries(response.headers), json: text === '' ? {} : JSON.parse(text) };
}

/**
 * Sends headers, then at most `maxSlices` slices of the body, and never ends the request: it waits
 * for the answer. With `declaredLength` the request carries that Content-Length; without it, it is
 * chunked. A server that waited to buffer the whole body could never answer, since the body never
 * completes. Resolves with the answer and how many body bytes went out.
 */
export function postUntilAnswered(
  url: string,
  headers: Record<string, string>,
  options: { declaredLength?: number; sliceBytes: number; maxSlices: number },
): Promise<{ answer: Answer; sentBytes: number }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const slice = Buffer.alloc(options.sliceBytes, 0x20);
    let sentBytes = 0;
    let answered = false;
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: options.declaredLength === undefined ? headers : { ...headers, 'content-length': String(options.declaredLength) },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ answer: { status: res.statusCode ?? 0, headers: res.headers, json: text === '' ? {} : JSON.parse(text) }, sentBytes });
          req.destroy();
        });
        res.on('error', reject);
      },
    );
    // The server may close the connection while we are still writing: that is expected here.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    let slices = 0;
    const pump = () => {
      if (answered || req.destroyed) return;
      if (slices === options.maxSlices) return; // stop short of ever completing the body
      slices += 1;
      sentBytes += slice.byteLength;
      req.write(slice, () => setImmediate(pump));
    };
    req.flushHeaders();
    pump();
  });
}

/** What a stalled or trickling client read back, and when. */
export interface SlowAnswer {
  /** The answer, when one came before the client gave up. */
  answer?: Answer;
  /** Milliseconds from the request head being sent to the answer (or to giving up). */
  ms: number;
}

/**
 * Sends the head and the first `sentBytes` of `body`, then never completes it: with `trickleMs`, one
 * more byte every `trickleMs` (stopping one byte short of the end), else silence. With `chunked` the
 * request has no Content-Length; otherwise it declares the whole body's. Only a server with a time
 * limit on the whole body can answer; the client waits at most `timeoutMs` for it.
 */
export function postSlowly(
  url: string,
  body: Uint8Array,
  headers: Record<string, string>,
  options: { sentBytes: number; chunked?: boolean; trickleMs?: number; timeoutMs: number },
): Promise<SlowAnswer> {
  const { sentBytes, chunked = false, trickleMs, timeoutMs } = options;
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    let started = 0;
    let settled = false;
    let trickle: ReturnType<typeof setInterval> | undefined;
    const finish = (answer?: Answer) => {
      if (settled) return;
      settled = true;
      clearInterval(trickle);
      clearTimeout(giveUp);
      resolve({ answer, ms: performance.now() - started });
      req.destroy();
    };
    const giveUp = setTimeout(() => finish(), timeoutMs);
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: chunked ? headers : { ...headers, 'content-length': String(body.byteLength) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          finish({ status: res.statusCode ?? 0, headers: res.headers, json: text === '' ? {} : JSON.parse(text) });
        });
        res.on('error', (error) => (settled ? undefined : reject(error)));
      },
    );
    // A server that answers and closes while bytes are still trickling in is doing its job.
    req.on('error', (error) => (settled ? undefined : reject(error)));
    req.flushHeaders();
    started = performance.now();
    let sent = Math.min(Math.floor(sentBytes), body.byteLength - 1);
    req.write(body.subarray(0, sent));
    if (trickleMs !== undefined) {
      trickle = setInterval(() => {
        if (sent >= body.byteLength - 1 || req.destroyed) return clearInterval(trickle);
        req.write(body.subarray(sent, sent + 1));
        sent += 1;
      }, trickleMs);
    }
  });
}
