/**
 * One saturation-suite server: `tsx server.ts hand-written|contract|bridge|handle`, each doing the
 * same work on node:http (verify the HMAC, parse, de-duplicate on the deliveryId, answer JSON):
 *   hand-written  a receiver written by hand: HMAC, timingSafeEqual, JSON.parse, a Map of seen ids;
 *   contract      the same, plus the checks of the envelope, its age and the unsigned headers;
 *   bridge        hookline's node:http bridge (createNodeHandler) with the memory store;
 *   handle        receiver.handle behind a hand-written body reader and writer (the receiver alone).
 * The protocol (port on stdout, CPU on IPC) is bench-server.ts's.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, createReceiver, memoryStore } from '@hookline/core';
import { benchMeter } from '../lib/bench-server';
import { BENCH_SECRET } from '../lib/payloads';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

function readBody(req: IncomingMessage, done: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => done(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function refuse(res: ServerResponse, status: number, code: string): void {
  send(res, status, `{"error":{"code":"${code}","message":"refused"}}`);
}

/** A listener that answers 405 to anything but a POST and hands a POST's whole body to `onBody`. */
function onPostBody(onBody: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void): Listener {
  return (req, res) => {
    if (req.method !== 'POST') return refuse(res, 405, 'METHOD_NOT_ALLOWED');
    readBody(req, (body) => onBody(req, res, body));
  };
}

/** Whether the signature header is the HMAC of `body`: node:crypto, compared in constant time. */
function signatureMatches(req: IncomingMessage, body: Buffer): boolean {
  const signature = req.headers['x-service-signature'];
  const expected = typeof signature === 'string' ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
  const digest = createHmac('sha256', BENCH_SECRET).update(body).digest();
  return expected.length === 32 && timingSafeEqual(digest, expected);
}

/** The de-duplication both hand-written receivers share: a Map of the ids seen. */
function answerOnce(res: ServerResponse, seen: Map<string, true>, deliveryId: string): void {
  if (seen.has(deliveryId)) {
    send(res, 200, '{"ok":true,"duplicate":true}');
    return;
  }
  seen.set(deliveryId, true);
  send(res, 200, '{"ok":true}');
}

function handWritten(): Listener {
  const seen = new Map<string, true>();
  return onPostBody((req, res, body) => {
    if (!signatureMatches(req, body)) return refuse(res, 401, 'INVALID_SIGNATURE');
    const { deliveryId } = JSON.parse(body.toString('utf8')) as { deliveryId: string };
    answerOnce(res, seen, deliveryId);
  });
}

// The receiver's defaults: a body timestamp may be 72 h old (the retention) or 5 min ahead.
const MAX_AGE_MS = 72 * 3_600_000;
const MAX_FUTURE_SKEW_MS = 300_000;

/**
 * The hand-written receiver plus every check the service's contract asks of one and hookline makes:
 * invalid UTF-8 refused, the envelope's four fields typed, the age window, and the two unsigned
 * headers agreeing with the body. What it costs over the bare hand-written receiver is what those
 * checks cost any receiver, so the rest of hookline's extra time is hookline's own.
 */
function contract(): Listener {
  const seen = new Map<string, true>();
  const fatal = new TextDecoder('utf-8', { fatal: true });
  return onPostBody((req, res, body) => {
    if (!signatureMatches(req, body)) return refuse(res, 401, 'INVALID_SIGNATURE');
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(fatal.decode(body)) as Record<string, unknown>;
    } catch {
      return refuse(res, 400, 'VALIDATION_ERROR');
    }
    const { event, deliveryId, timestamp, data } = parsed;
    if (
      typeof event !== 'string' ||
      typeof deliveryId !== 'string' ||
      !deliveryId.startsWith('wdl_') ||
      typeof timestamp !== 'string' ||
      typeof data !== 'object' ||
      data === null
    )
      return refuse(res, 400, 'VALIDATION_ERROR');
    if (req.headers['x-service-event'] !== event || req.headers['x-service-delivery-id'] !== deliveryId)
      return refuse(res, 400, 'VALIDATION_ERROR');
    const age = Date.now() - Date.parse(timestamp);
    if (!(age < MAX_AGE_MS && age > -MAX_FUTURE_SKEW_MS)) return refuse(res, 400, 'TIMESTAMP_OUT_OF_RANGE');
    answerOnce(res, seen, deliveryId);
  });
}

function receiverWith(kind: 'bridge' | 'handle'): Listener {
  const receiver = createReceiver({ secret: BENCH_SECRET, store: memoryStore() }).on('*', () => {});
  if (kind === 'bridge') return createNodeHandler(receiver, { path: '/webhooks' }) as Listener;
  return (req, res) => {
    readBody(req, (body) => {
      void receiver.handle({ body, headers: req.headers }).then((answer) => send(res, answer.status, answer.body));
    });
  };
}

const kind = process.argv[2];
if (kind !== 'hand-written' && kind !== 'contract' && kind !== 'bridge' && kind !== 'handle')
  throw new Error(`server.ts: unknown kind ${kind}`);
const listener = kind === 'hand-written' ? handWritten() : kind === 'contract' ? contract() : receiverWith(kind);
const meter = benchMeter();
const server = createServer((req, res) => {
  meter.count();
  listener(req, res);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => meter.serve((server.address() as AddressInfo).port, () => server.close()));
