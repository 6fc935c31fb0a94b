// Every adapter whose body hookline reads takes a route's own `bodyTimeoutMs` (AdapterOptions): here the
// receiver allows a minute and the route 300 ms, so only the route's limit can give the 408 in time.
// A limit that is not a positive number of milliseconds is refused when the route is made, naming the
// adapter's factory.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { ReceiverEndpoint } from '@hookline/core';
import { webhookHandler as expressWebhookHandler } from '@hookline/express';
import { webhookPlugin } from '@hookline/fastify';
import { webhookHandler as h3WebhookHandler } from '@hookline/h3';
import { webhookHandler as honoWebhookHandler } from '@hookline/hono';
import { webhookMiddleware } from '@hookline/koa';
import { HooklineModule } from '@hookline/nestjs';
import { webhookApiRoute, webhookRoute } from '@hookline/next';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import express from 'express';
import Fastify from 'fastify';
import { H3, toNodeHandler } from 'h3';
import { createApp, createRouter, toNodeListener } from 'h3-v1';
import { Hono } from 'hono';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { closeServer, listenOnLoopback } from '../support/loopback';
import { createSignedDelivery } from './support/deliveries';
import { postSlowly } from './support/http';
import { createTestReceiver } from './support/test-receiver';

const ROUTE_LIMIT_MS = 300;
const RECEIVER_LIMIT_MS = 60_000;
const options = { bodyTimeoutMs: ROUTE_LIMIT_MS };

/** Each adapter serving `receiver` at `/r` with the route's limit; resolves to the server listening. */
const ADAPTERS: Record<string, (receiver: ReceiverEndpoint) => Promise<Server>> = {
  Express: async (receiver) => {
    const app = express();
    app.post('/r', expressWebhookHandler(receiver, options));
    return createServer(app);
  },
  Hono: async (receiver) => {
    const app = new Hono();
    app.post('/r', honoWebhookHandler(receiver, options));
    return new Promise<Server>((resolve) => {
      const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(server as Server));
    });
  },
  Fastify: async (receiver) => {
    const app = Fastify();
    await app.register(webhookPlugin, { receiver, path: '/r', ...options });
    await app.ready();
    return app.server;
  },
  Koa: async (receiver) => {
    const app = new Koa();
    app.silent = true;
    app.use(webhookMiddleware(receiver, { path: '/r', ...options }));
    return createServer(app.callback());
  },
  'h3 v1': async (receiver) => {
    const app = createApp();
    app.use(createRouter().post('/r', h3WebhookHandler(receiver, options)));
    return createServer(toNodeListener(app));
  },
  'h3 v2': async (receiver) => {
    const app = new H3();
    app.post('/r', h3WebhookHandler(receiver, options));
    return createServer(toNodeHandler(app));
  },
  'Next.js Pages Router': async (receiver) => createServer(webhookApiRoute(receiver, options)),
  'NestJS on Express': (receiver) => nestServer(new ExpressAdapter(express()), receiver),
  'NestJS on Fastify': (receiver) => nestServer(new FastifyAdapter(), receiver),
};

const nestApps: { close(): Promise<void> }[] = [];
async function nestServer(adapter: ExpressAdapter | FastifyAdapter, receiver: ReceiverEndpoint): Promise<Server> {
  const module = HooklineModule.forRoot({ receiver: receiver as never, path: '/r', ...options });
  const app = await NestFactory.create(module, adapter, { logger: false });
  nestApps.push(app);
  await app.listen(0, '127.0.0.1');
  return app.getHttpServer() as Server;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const app of nestApps.splice(0)) await app.close();
  for (const server of servers.splice(0)) if (server.listening) await closeServer(server);
});

async function urlOf(server: Server): Promise<string> {
  servers.push(server);
  if (!server.listening) return `${(await listenOnLoopback(server)).base}/r`;
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/r`;
}

function expectRouteLimit(status: number | undefined, error: { code?: string; details?: unknown } | undefined, ms: number): void {
  expect(status).toBe(408);
  expect(error).toMatchObject({ code: 'REQUEST_TIMEOUT', details: { limitMs: ROUTE_LIMIT_MS } });
  expect(ms).toBeGreaterThanOrEqual(ROUTE_LIMIT_MS - 5);
  expect(ms).toBeLessThan(RECEIVER_LIMIT_MS / 2); // the receiver's minute did not decide it
}

describe("a route's own bodyTimeoutMs", () => {
  for (const [name, start] of Object.entries(ADAPTERS)) {
    it(`${name}: a body that stalls past the route's limit is answered 408 at that limit, not the receiver's`, async () => {
      const receiver = createTestReceiver(() => {}, { bodyTimeoutMs: RECEIVER_LIMIT_MS });
      const url = await urlOf(await start(receiver));
      const delivery = createSignedDelivery();
      const { answer, ms } = await postSlowly(url, delivery.body, delivery.headers, {
        sentBytes: delivery.body.byteLength / 2,
        chunked: true,
        timeoutMs: 20_000,
      });
      expect(answer, `no answer within ${Math.round(ms)} ms`).toBeDefined();
      expectRouteLimit(answer?.status, answer?.json.error, ms);
    });
  }

  it("Next.js App Router: a Request body that stalls past the route's limit is answered 408", async () => {
    const receiver = createTestReceiver(() => {}, { bodyTimeoutMs: RECEIVER_LIMIT_MS });
    const delivery = createSignedDelivery();
    const half = delivery.body.subarray(0, delivery.body.byteLength / 2);
    // Half the body, then nothing: the stream is never closed.
    const body = new ReadableStream<Uint8Array>({ start: (controller) => controller.enqueue(half) });
    const request = new Request('http://127.0.0.1/r', { method: 'POST', headers: delivery.headers, body, duplex: 'half' } as RequestInit);
    const started = performance.now();
    const response = await webhookRoute(receiver, options)(request);
    const ms = performance.now() - started;
    expectRouteLimit(response.status, ((await response.json()) as { error?: { code?: string } }).error, ms);
  });

  it('a limit that is not a positive number of milliseconds is refused when the route is made, naming its factory', async () => {
    const receiver = createTestReceiver(() => {});
    const bad = { bodyTimeoutMs: 0 };
    const message = (factory: string) => `${factory}: bodyTimeoutMs must be a positive number of milliseconds, got 0`;
    expect(() => expressWebhookHandler(receiver, bad)).toThrow(message('webhookHandler'));
    expect(() => honoWebhookHandler(receiver, bad)).toThrow(message('webhookHandler'));
    expect(() => h3WebhookHandler(receiver, bad)).toThrow(message('webhookHandler'));
    expect(() => webhookMiddleware(receiver, bad)).toThrow(message('webhookMiddleware'));
    expect(() => webhookRoute(receiver, bad)).toThrow(message('webhookRoute'));
    expect(() => webhookApiRoute(receiver, bad)).toThrow(message('webhookApiRoute'));
    const app = Fastify();
    await expect(app.register(webhookPlugin, { receiver, ...bad }).ready()).rejects.toThrow(message('webhookPlugin'));
    await app.close();
  });
});
