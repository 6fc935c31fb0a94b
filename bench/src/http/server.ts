/**
 * One benchmark server process: `tsx server.ts <framework>-<baseline|hookline|dedupe>`, framework one
 * of express, hono, fastify, node, koa, h3, h3v1, nestjs, nestfastify. Prints `{"port":N}` when listening; IPC "start"/"stop" measure its own
 * CPU time and requests in between (reply `{ cpuMicros, requests }`), "exit" stops it.
 *
 * The baselines are what a careful developer writes by hand on the same framework: read the raw
 * body, HMAC-SHA256 with node:crypto, timingSafeEqual, JSON.parse, answer 200. No de-duplication,
 * no envelope checks, no size limit on Hono: the leanest honest handler, so the ratio is strict.
 * `hookline` is the adapter doing that same work: verification, envelope and freshness checks, no
 * handler registered (so no store round trip). `dedupe` adds what the baseline does not do at all: a
 * memory-store claim and completion and a (no-op) handler per request.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createNodeHandler, createReceiver, memoryStore } from '@hookline/core';
import { webhookHandler as expressAdapter } from '@hookline/express';
import { webhookPlugin } from '@hookline/fastify';
import { webhookHandler as honoAdapter } from '@hookline/hono';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { benchMeter } from '../lib/bench-server';
import { type FrameworkKit, startH3, startH3v1, startKoa, startNest } from './more-frameworks';
import { BENCH_SECRET } from '../lib/payloads';

const kind = process.argv[2] ?? '';
const [framework, variant] = kind.split('-');
const adapter = variant === 'hookline' || variant === 'dedupe';
const OK = '{"ok":true}';
const UNAUTHORIZED = '{"error":{"code":"INVALID_SIGNATURE","message":"bad signature"}}';
const LIMIT = 1_048_576;

function receiver() {
  const r = createReceiver({ secret: BENCH_SECRET, store: memoryStore({ maxEntries: 5_000_000 }) });
  return variant === 'dedupe' ? r.on('*', () => {}) : r;
}

/** The hand-written signature check: HMAC over the exact bytes, constant-time compare. */
function verify(body: Uint8Array, signature: string | string[] | null | undefined): boolean {
  if (typeof signature !== 'string' || signature.length !== 64) return false;
  const given = Buffer.from(signature, 'hex');
  const expected = createHmac('sha256', BENCH_SECRET).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The hand-written check, then JSON.parse of the same bytes. */
function verifyAndParse(body: Uint8Array, signature: string | string[] | null | undefined): boolean {
  if (!verify(body, signature)) return false;
  JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  return true;
}

/** Raw body of a node request, with a size limit (what express.raw() or a hand-written reader does). */
function readBody(req: IncomingMessage, done: (body: Buffer | undefined) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= LIMIT) chunks.push(chunk);
  });
  req.on('end', () => done(size > LIMIT ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
}

function nodeBaseline(req: IncomingMessage, res: ServerResponse): void {
  readBody(req, (body) => {
    const ok = body !== undefined && verifyAndParse(body, req.headers['x-service-signature']);
    const answer = ok ? OK : UNAUTHORIZED;
    // With a Content-Length, like hookline's answer (writeHead without one would send it chunked).
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
  });
}

const meter = benchMeter();
const count = (_req: IncomingMessage, _res: ServerResponse, next: () => void) => {
  meter.count();
  next();
};

async function start(): Promise<{ port: number; close(): void }> {
  if (framework === 'node' || framework === 'express') {
    let listener: (req: IncomingMessage, res: ServerResponse) => void;
    if (framework === 'node') {
      listener = adapter ? createNodeHandler(receiver(), { path: '/webhooks' }) : nodeBaseline;
    } else {
      const app = express();
      app.post('/webhooks', adapter ? expressAdapter(receiver()) : nodeBaseline);
      listener = app;
    }
    const server: Server = createServer((req, res) => count(req, res, () => listener(req, res)));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, close: () => server.close() };
  }
  if (framework === 'hono') {
    const app = new Hono();
    if (adapter) app.post('/webhooks', honoAdapter(receiver()));
    else
      app.post('/webhooks', async (c) => {
        const body = new Uint8Array(await c.req.arrayBuffer());
        const ok = verifyAndParse(body, c.req.header('x-service-signature'));
        return new Response(ok ? OK : UNAUTHORIZED, { status: ok ? 200 : 401, headers: { 'content-type': 'application/json' } });
      });
    const server = await new Promise<Server>((resolve) => {
      const s = serve(
        {
          fetch: (request, env) => {
            meter.count();
            return app.fetch(request, env);
          },
          port: 0,
          hostname: '127.0.0.1',
        },
        () => resolve(s as Server),
      );
    });
    server.keepAliveTimeout = 60_000;
    return { port: (server.address() as AddressInfo).port, close: () => server.close() };
  }
  if (framework === 'fastify') {
    const app = Fastify({ keepAliveTimeout: 60_000 });
    app.addHook('onRequest', async () => {
      meter.count();
    });
    if (adapter) await app.register(webhookPlugin, { receiver: receiver(), path: '/webhooks' });
    else
      await app.register(async (scope) => {
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
        scope.post('/webhooks', async (request, reply) => {
          const ok = verifyAndParse(request.body as Buffer, request.headers['x-service-signature']);
          return reply
            .code(ok ? 200 : 401)
            .header('content-type', 'application/json')
            .send(ok ? OK : UNAUTHORIZED);
        });
      });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as AddressInfo).port, close: () => void app.close() };
  }
  const kit: FrameworkKit = { receiver, verify, verifyAndParse, readBody, count: () => meter.count() };
  if (framework === 'koa') return startKoa(adapter, kit);
  if (framework === 'h3') return startH3(adapter, kit);
  if (framework === 'h3v1') return startH3v1(adapter, kit);
  if (framework === 'nestjs') return startNest(adapter, kit, 'express');
  if (framework === 'nestfastify') return startNest(adapter, kit, 'fastify');
  throw new Error(
    `server.ts: unknown kind "${kind}"; use <express|hono|fastify|node|koa|h3|h3v1|nestjs|nestfastify>-<baseline|hookline|dedupe>`,
  );
}

const { port, close } = await start();
meter.serve(port, close);
