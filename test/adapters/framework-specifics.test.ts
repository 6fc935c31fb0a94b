// What only one framework has: Express body parsers, Fastify's encapsulation, Hono's body cache.
import { webhookHandler as expressWebhookHandler } from '@hookline/express';
import { webhookPlugin } from '@hookline/fastify';
import { webhookHandler as honoWebhookHandler } from '@hookline/hono';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express4 from 'express4';
import express5 from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createSignedDelivery } from './support/deliveries';
import { createTestReceiver, type Run } from './support/test-receiver';

function receiver() {
  const runs: Run[] = [];
  return { runs, receiver: createTestReceiver((run) => runs.push(run)) };
}

describe.each([
  ['Express 4', express4],
  ['Express 5', express5],
] as const)('%s with body parsers', (_name, express) => {
  it('takes the Buffer express.raw() left in req.body', async () => {
    const { runs, receiver: r } = receiver();
    const app = express();
    app.post('/webhooks', express.raw({ type: '*/*' }), expressWebhookHandler(r));
    const delivery = createSignedDelivery({ bom: true, controls: { note: 'ünïcödé' } });
    const answer = await request(app).post('/webhooks').set(delivery.headers).send(delivery.body.toString('utf8')); // a Buffer with a JSON type would be re-serialised by superagent
    expect(answer.status).toBe(200);
    expect(runs.filter((run) => run.outcome === 'started').map((run) => run.note)).toEqual(['ünïcödé']);
  });

  it('answers the configuration error at once behind express.text()', async () => {
    const { runs, receiver: r } = receiver();
    const app = express();
    app.use(express.text({ type: '*/*' }));
    app.post('/webhooks', expressWebhookHandler(r));
    const delivery = createSignedDelivery();
    const answer = await request(app).post('/webhooks').set(delivery.headers).send(delivery.body.toString('utf8')); // a Buffer with a JSON type would be re-serialised by superagent
    expect(answer.status).toBe(500);
    expect(answer.body.error.code).toBe('CONFIGURATION_ERROR');
    expect(answer.body.error.message).toContain('before app.use(express.json())');
    expect(runs).toHaveLength(0);
  });

  it('leaves the JSON parser of the other routes alone', async () => {
    const { receiver: r } = receiver();
    const app = express();
    app.post('/webhooks', expressWebhookHandler(r));
    app.use(express.json());
    app.post('/api/echo', (req, res) => void res.json({ parsed: req.body }));
    const answer = await request(app).post('/api/echo').send({ hello: 'world' });
    expect(answer.body).toEqual({ parsed: { hello: 'world' } });
  });
});

describe('Fastify plugin encapsulation', () => {
  it('keeps JSON parsing for routes outside the plugin and raw bytes inside it', async () => {
    const { runs, receiver: r } = receiver();
    const app = Fastify();
    await app.register(webhookPlugin, { receiver: r, path: '/webhooks' });
    app.post('/api/echo', async (req) => ({ parsed: req.body }));
    await app.ready();
    try {
      const echo = await app.inject({ method: 'POST', url: '/api/echo', payload: { hello: 'world' } });
      expect(echo.json()).toEqual({ parsed: { hello: 'world' } });
      const delivery = createSignedDelivery({ bom: true });
      const answer = await app.inject({ method: 'POST', url: '/webhooks', headers: delivery.headers, payload: delivery.body });
      expect(answer.statusCode).toBe(200);
      expect(runs.filter((run) => run.outcome === 'started')).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('accepts any content type, and none, on the webhook route', async () => {
    const { receiver: r } = receiver();
    const app = Fastify();
    await app.register(webhookPlugin, { receiver: r });
    try {
      for (const contentType of ['text/plain', 'application/octet-stream', undefined]) {
        const delivery = createSignedDelivery();
        const { 'content-type': _json, ...headers } = delivery.headers;
        const answer = await app.inject({
          method: 'POST',
          url: '/webhooks',
          headers: contentType === undefined ? headers : { ...headers, 'content-type': contentType },
          payload: delivery.body,
        });
        expect(answer.statusCode).toBe(200);
      }
    } finally {
      await app.close();
    }
  });
});

describe('Hono body cache', () => {
  it('uses the bytes a middleware already read with c.req.arrayBuffer()', async () => {
    const { runs, receiver: r } = receiver();
    const app = new Hono();
    app.use('/webhooks', async (c, next) => {
      await c.req.arrayBuffer();
      await next();
    });
    app.post('/webhooks', honoWebhookHandler(r));
    const delivery = createSignedDelivery({ bom: true });
    const response = await app.request('/webhooks', { method: 'POST', headers: delivery.headers, body: new Uint8Array(delivery.body) });
    expect(response.status).toBe(200);
    expect(runs.filter((run) => run.outcome === 'started')).toHaveLength(1);
  });

  it('refuses a body a middleware read as text (the BOM is gone)', async () => {
    const { receiver: r } = receiver();
    const app = new Hono();
    app.use('/webhooks', async (c, next) => {
      await c.req.text();
      await next();
    });
    app.post('/webhooks', honoWebhookHandler(r));
    const delivery = createSignedDelivery({ bom: true });
    const response = await app.request('/webhooks', { method: 'POST', headers: delivery.headers, body: new Uint8Array(delivery.body) });
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('CONFIGURATION_ERROR');
  });

  it('reads a Web Request (no node request behind it, as on Bun, Deno or Workers)', async () => {
    const { runs, receiver: r } = receiver();
    const app = new Hono();
    app.post('/webhooks', honoWebhookHandler(r));
    const delivery = createSignedDelivery({ bom: true, controls: { note: 'Grüße' } });
    const response = await app.request('/webhooks', { method: 'POST', headers: delivery.headers, body: new Uint8Array(delivery.body) });
    expect(response.status).toBe(200);
    expect(runs.filter((run) => run.outcome === 'started').map((run) => run.note)).toEqual(['Grüße']);
  });

  it('on @hono/node-server, refuses a body a middleware read from c.req.raw itself, instead of waiting for it', async () => {
    const { runs, receiver: r } = receiver();
    const app = new Hono();
    app.use('/webhooks', async (c, next) => {
      await c.req.raw.arrayBuffer(); // past Hono's body cache: node's stream is drained
      await next();
    });
    app.post('/webhooks', honoWebhookHandler(r));
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
    });
    try {
      const delivery = createSignedDelivery();
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
      const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: new Uint8Array(delivery.body) });
      expect(response.status).toBe(500);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('CONFIGURATION_ERROR');
      expect(runs).toHaveLength(0);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers 405 to other methods', async () => {
    const { receiver: r } = receiver();
    const app = new Hono();
    app.all('/webhooks', honoWebhookHandler(r));
    const response = await app.request('/webhooks', { method: 'GET' });
    expect(response.status).toBe(405);
  });
});
