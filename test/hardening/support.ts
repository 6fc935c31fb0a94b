// Shared by the hardening tests: a receiver that records what its handler saw, real servers on
// 127.0.0.1, raw-socket requests and the run counts (quick in `pnpm test`, long under HOOKLINE_LONG=1).
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { createNodeHandler, createReceiver, memoryStore, type Delivery } from '@hookline/core';
import { sign } from '@hookline/testing';
import { listenOnLoopback } from '../support/loopback';

export const SECRET = 'whsec_hardening_5c1e9f0a';

/** fast-check runs: small in the normal suite, ≥ 100,000 with HOOKLINE_LONG=1 (`pnpm test:long`). */
export const LONG = process.env.HOOKLINE_LONG === '1';
export const runs = (quick: number, long = 100_000): number => (LONG ? long : quick);
/** Per-test timeout that grows with the long run. */
export const propertyTimeout = LONG ? 30 * 60_000 : 60_000;

/** A receiver whose catch-all handler records every delivery it ran. Bad input is the point: no refusal notes. */
export function recordingReceiver(options: { maxBodyBytes?: number } = {}) {
  const seen: Delivery<string, unknown>[] = [];
  const receiver = createReceiver({ secret: SECRET, store: memoryStore(), maxBodyBytes: options.maxBodyBytes, logger: false }).on(
    '*',
    (delivery) => {
      seen.push(delivery);
    },
  );
  receiver.onError(() => {}); // handler/store errors are asserted through answers, not logs
  return { receiver, seen };
}

/** A node:http server on a free loopback port, with its webhook URL; `close` ends it and its connections. */
export async function listen(server: Server): Promise<{ url: string; port: number; close: () => Promise<void> }> {
  const { port, base, close } = await listenOnLoopback(server);
  return { port, url: `${base}/webhooks`, close };
}

/** The node:http bridge for a receiver on a free port. */
export function nodeServer(receiver: Parameters<typeof createNodeHandler>[0], options: Parameters<typeof createServer>[0] = {}) {
  return listen(createServer(options, createNodeHandler(receiver, { path: '/webhooks' })));
}

/** Headers the service sends for a body. */
export function serviceHeaders(body: string | Uint8Array, delivery?: { event: string; deliveryId: string }): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-service-signature': sign(body, SECRET) };
  if (delivery) {
    headers['x-service-event'] = delivery.event;
    headers['x-service-delivery-id'] = delivery.deliveryId;
  }
  return headers;
}

/** A fresh, valid delivery body (as bytes) with `data`. */
export function deliveryBody(
  data: unknown,
  event = 'message.inbound',
  deliveryId = `wdl_${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`,
): string {
  return JSON.stringify({ event, timestamp: new Date().toISOString(), deliveryId, data });
}

export interface RawResponse {
  /** Status of each response read from the socket, in order. */
  statuses: number[];
  /** Everything the server wrote. */
  text: string;
  /** Whether the server closed the connection (rather than the client). */
  closedByServer: boolean;
}

/**
 * Writes `parts` to a raw TCP connection (pausing `gapMs` between them), then waits until the server
 * closes the connection or `idleMs` passes without a byte; never asserts on time.
 */
export function rawRequest(
  port: number,
  parts: (string | Buffer)[],
  options: { gapMs?: number; idleMs?: number } = {},
): Promise<RawResponse> {
  const { gapMs = 0, idleMs = 1_500 } = options;
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let text = '';
    let closedByServer = false;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      clearTimeout(idle);
      socket.destroy();
      const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
      resolve({ statuses, text, closedByServer });
    };
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(finish, idleMs);
    };
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      arm();
    });
    socket.on('end', () => {
      closedByServer = true;
      finish();
    });
    socket.on('close', () => {
      closedByServer = true;
      finish();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET') return reject(error);
      closedByServer = true;
      finish();
    });
    socket.on('connect', async () => {
      for (const part of parts) {
        if (socket.destroyed) break;
        socket.write(part);
        if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      }
      arm();
    });
  });
}

/** The JSON error of an answer body. */
export const errorOf = (body: string) => (JSON.parse(body) as { error: { code: string; details?: Record<string, unknown> } }).error;
