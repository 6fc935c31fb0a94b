// One adapter in a process of its own, so the transport tests can load the CPU around it and read its
// memory (RSS) from /proc. Env: ADAPTER (node | express4 | express5 | hono | fastify | h3v1 | h3v2),
// SLOW_BODY_TIMEOUT_MS.
// Serves /webhooks (a receiver with the default limits) and /slow (bodyTimeoutMs: SLOW_BODY_TIMEOUT_MS),
// mounted the way the READMEs say; prints {"port":N} once listening.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { webhookHandler as expressWebhookHandler } from '@hookline/express';
import { webhookPlugin } from '@hookline/fastify';
import { webhookHandler as h3WebhookHandler } from '@hookline/h3';
import { webhookHandler as honoWebhookHandler } from '@hookline/hono';
import express4 from 'express4';
import express5 from 'express';
import Fastify from 'fastify';
import { H3, toNodeHandler } from 'h3';
import { createApp, toNodeListener } from 'h3-v1';
import { Hono } from 'hono';
import { listenOnLoopback } from '../support/loopback';

const adapter = process.env.ADAPTER ?? 'node';
const makeReceiver = (bodyTimeoutMs?: number) => {
  const receiver = createReceiver({ secret: 'whsec_transport_0123456789', bodyTimeoutMs, logger: false });
  receiver.on('*', () => {});
  receiver.onError(() => {});
  return receiver;
};
const receiver = makeReceiver();
const slow = makeReceiver(Number(process.env.SLOW_BODY_TIMEOUT_MS ?? 500));

async function listen(server: Server): Promise<number> {
  return (await listenOnLoopback(server)).port;
}

async function start(): Promise<number> {
  switch (adapter) {
    case 'node': {
      // Other paths: the second handler answers hookline's 404.
      const webhooks = createNodeHandler(receiver, { path: '/webhooks' });
      const slowRoute = createNodeHandler(slow, { path: '/slow' });
      return listen(createServer((req, res) => void webhooks(req, res, () => void slowRoute(req, res))));
    }
    case 'express4':
    case 'express5': {
      const express = adapter === 'express4' ? express4 : express5;
      const app = express();
      app.all('/webhooks', expressWebhookHandler(receiver));
      app.all('/slow', expressWebhookHandler(slow));
      app.use(express.json());
      return listen(createServer(app));
    }
    case 'hono': {
      const app = new Hono();
      app.all('/webhooks', honoWebhookHandler(receiver));
      app.all('/slow', honoWebhookHandler(slow));
      return new Promise((resolve) => {
        serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
      });
    }
    case 'fastify': {
      const app = Fastify();
      await app.register(webhookPlugin, { receiver, path: '/webhooks' });
      await app.register(webhookPlugin, { receiver: slow, path: '/slow' });
      await app.listen({ port: 0, host: '127.0.0.1' });
      return (app.server.address() as AddressInfo).port;
    }
    case 'h3v1': {
      // Mounted for every method, as the README says.
      const app = createApp();
      app.use('/webhooks', h3WebhookHandler(receiver));
      app.use('/slow', h3WebhookHandler(slow));
      return listen(createServer(toNodeListener(app)));
    }
    case 'h3v2': {
      const app = new H3().all('/webhooks', h3WebhookHandler(receiver)).all('/slow', h3WebhookHandler(slow));
      return listen(createServer(toNodeHandler(app)));
    }
    default:
      throw new Error(`transport-server: unknown ADAPTER ${adapter}`);
  }
}

process.stdout.write(`${JSON.stringify({ port: await start() })}\n`);
