// The in-process targets of the matrix: each framework serving the test receiver on 127.0.0.1.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createNodeHandler } from '@hookline/core';
import { webhookHandler as expressWebhookHandler } from '@hookline/express';
import { webhookPlugin } from '@hookline/fastify';
import { webhookHandler as honoWebhookHandler } from '@hookline/hono';
import express4 from 'express4';
import express5 from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { closeServer, listenOnLoopback } from '../../support/loopback';
import type { AdapterTarget } from './scenarios';
import { createTestReceiver, type Run, SLOW_BODY_TIMEOUT_MS } from './test-receiver';

/** A started target and how to stop it. */
export type RunningTarget = AdapterTarget & { close(): Promise<void> };

/** The base URL of `server` on a free loopback port. */
export async function listen(server: Server): Promise<string> {
  return (await listenOnLoopback(server)).base;
}

export { closeServer };

/**
 * One receiver for the good route, one for the misconfigured route, one with the small body-read time
 * limit for the slow route (mounted like the good one), one list of runs.
 */
export function receivers() {
  const runs: Run[] = [];
  const record = (run: Run) => runs.push(run);
  return {
    runs,
    receiver: createTestReceiver(record),
    misconfigured: createTestReceiver(record),
    slow: createTestReceiver(record, { bodyTimeoutMs: SLOW_BODY_TIMEOUT_MS }),
  };
}

/** Express 4 or 5: the route before `express.json()`, and one behind it. */
export async function startExpress(version: 4 | 5): Promise<RunningTarget> {
  const { runs, receiver, misconfigured, slow } = receivers();
  const express = version === 4 ? express4 : express5;
  const app = express();
  app.post('/webhooks', expressWebhookHandler(receiver));
  app.post('/slow', expressWebhookHandler(slow));
  app.use(express.json());
  app.post('/misconfigured', expressWebhookHandler(misconfigured));
  const server = createServer(app);
  const base = await listen(server);
  return {
    url: `${base}/webhooks`,
    slowUrl: `${base}/slow`,
    misconfiguredUrl: `${base}/misconfigured`,
    fixHint: 'express.raw(',
    runs: async () => runs,
    close: () => closeServer(server),
  };
}

/** Hono on @hono/node-server; the misconfigured route sits behind a middleware that read `c.req.json()`. */
export async function startHono(): Promise<RunningTarget> {
  const { runs, receiver, misconfigured, slow } = receivers();
  const app = new Hono();
  app.post('/webhooks', honoWebhookHandler(receiver));
  app.post('/slow', honoWebhookHandler(slow));
  app.use('/misconfigured', async (c, next) => {
    await c.req.json();
    await next();
  });
  app.post('/misconfigured', honoWebhookHandler(misconfigured));
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/webhooks`,
    slowUrl: `${base}/slow`,
    misconfiguredUrl: `${base}/misconfigured`,
    fixHint: 'c.req.arrayBuffer()',
    runs: async () => runs,
    close: () => closeServer(server),
  };
}

/** Fastify with the plugin; the misconfigured scope has a hook that drains the stream first. */
export async function startFastify(): Promise<RunningTarget> {
  const { runs, receiver, misconfigured, slow } = receivers();
  const app = Fastify();
  await app.register(webhookPlugin, { receiver, path: '/webhooks' });
  await app.register(webhookPlugin, { receiver: slow, path: '/slow' });
  await app.register(async (scope) => {
    scope.addHook('preParsing', async (request, _reply, payload) => {
      for await (const _chunk of request.raw) {
        // a logging hook that reads the body and forgets to hand it on
      }
      return payload;
    });
    await scope.register(webhookPlugin, { receiver: misconfigured, path: '/misconfigured' });
  });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url: `${base}/webhooks`,
    slowUrl: `${base}/slow`,
    misconfiguredUrl: `${base}/misconfigured`,
    fixHint: 'preParsing',
    runs: async () => runs,
    close: () => app.close(),
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** node:http through the core bridge; the misconfigured path parses JSON into `req.body` first. */
export async function startNodeHttp(): Promise<RunningTarget> {
  const { runs, receiver, misconfigured, slow } = receivers();
  const webhooks = createNodeHandler(receiver, { path: '/webhooks' });
  const slowRoute = createNodeHandler(slow, { path: '/slow' });
  const parsedFirst = createNodeHandler(misconfigured, { path: '/misconfigured' });
  const server = createServer((req: IncomingMessage & { body?: unknown }, res) => {
    if (req.url === '/slow') return void slowRoute(req, res);
    if (req.url !== '/misconfigured') return void webhooks(req, res);
    readJson(req).then(
      (body) => {
        req.body = body;
        return parsedFirst(req, res);
      },
      () => res.destroy(),
    );
  });
  const base = await listen(server);
  return {
    url: `${base}/webhooks`,
    slowUrl: `${base}/slow`,
    misconfiguredUrl: `${base}/misconfigured`,
    fixHint: 'raw parser',
    runs: async () => runs,
    close: () => closeServer(server),
  };
}

// Koa, h3 and NestJS live in their own files (one framework each); the matrix imports them from here.
export { startKoa } from './koa-target';
export { startH3 } from './h3-target';
export { startNest } from './nest-target';
