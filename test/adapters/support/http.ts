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
