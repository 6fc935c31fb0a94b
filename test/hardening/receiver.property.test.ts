// Property tests of the receiver's two promises: nothing unverified ever gets a 2xx or runs a
// handler, and every valid delivery reaches the handler unchanged through every entry point.
// Quick runs in `pnpm test`; `pnpm test:long` (HOOKLINE_LONG=1) runs ≥ 100,000 cases per property.
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import express from 'express';
import fc from 'fast-check';
import { Hono } from 'hono';
import { webhookHandler as expressHandler } from '@hookline/express';
import { webhookPlugin } from '@hookline/fastify';
import { webhookHandler as honoHandler } from '@hookline/hono';
import { webhookApiRoute, webhookRoute } from '@hookline/next';
import { webhookHandler as h3Handler } from '@hookline/h3';
import { webhookMiddleware as koaMiddleware } from '@hookline/koa';
import { HooklineModule } from '@hookline/nestjs';
import { NestFactory } from '@nestjs/core';
import { H3 } from 'h3';
import Koa from 'koa';
import Fastify from 'fastify';
import { EVENT_NAMES } from '@hookline/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, nodeServer, propertyTimeout, recordingReceiver, runs, SECRET } from './support';

const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
/** Signatures an attacker might send: random hex, near-misses, junk, several joined. */
const signatureArb = fc.oneof(
  hex64,
  fc.string(),
  fc.stringMatching(/^[0-9A-Fa-f ]{60,70}$/),
  fc.constant(''),
  fc.array(hex64, { minLength: 2, maxLength: 3 }).map((list) => list.join(', ')),
);
const headerValue = fc.oneof(fc.string(), fc.constantFrom('message.inbound', 'wdl_x', ''));
/** Bodies: random bytes, random JSON, and well-formed deliveries. */
const bodyArb = fc.oneof(
  fc.uint8Array({ maxLength: 512 }),
  fc.json().map((text) => new TextEncoder().encode(text)),
  fc
    .record({
      event: fc.constantFrom(...EVENT_NAMES),
      deliveryId: fc.string().map((s) => `wdl_${s}x`),
      data: fc.dictionary(fc.string(), fc.jsonValue()),
    })
    .map((d) => new TextEncoder().encode(JSON.stringify({ ...d, timestamp: new Date().toISOString() }))),
);
const hmac = (body: Uint8Array, secret: string) => createHmac('sha256', secret).update(body).digest('hex');

describe('unverified input', () => {
  it(
    'never gets a 2xx, never throws, never runs a handler',
    async () => {
      const { receiver, seen } = recordingReceiver();
      await fc.assert(
        fc.asyncProperty(
          bodyArb,
          signatureArb,
          headerValue,
          headerValue,
          fc.boolean(),
          async (body, signature, event, deliveryId, useHeaders) => {
            fc.pre(signature !== hmac(body, SECRET)); // a random guess that is right: impossible in practice
            const headers = { 'x-service-signature': signature, 'x-service-event': event, 'x-service-delivery-id': deliveryId };
            const answer = await receiver.handle({ body, headers: useHeaders ? new Headers(headers) : headers });
            expect(answer.status).toBeGreaterThanOrEqual(400);
            expect(answer.status).toBeLessThan(500);
            expect(seen).toHaveLength(0);
          },
        ),
        { numRuns: runs(200) },
      );
    },
    propertyTimeout,
  );

  it(
    'a valid signature over other bytes, or made with another secret, is refused',
    async () => {
      const { receiver, seen } = recordingReceiver();
      await fc.assert(
        fc.asyncProperty(bodyArb, fc.integer({ min: 0, max: 10_000 }), fc.string({ minLength: 1 }), async (body, flip, otherSecret) => {
          fc.pre(otherSecret !== SECRET);
          const tampered = Uint8Array.from(body.length === 0 ? [0x20] : body);
          if (body.length > 0) tampered[flip % tampered.length] = (tampered[flip % tampered.length] as number) ^ (1 + (flip % 255));
          for (const [bytes, signature] of [
            [tampered, hmac(body, SECRET)],
            [body, hmac(body, otherSecret)],
          ] as const) {
            const answer = await receiver.handle({ body: bytes, headers: { 'x-service-signature': signature } });
            expect(answer.status).toBe(401);
          }
          expect(seen).toHaveLength(0);
        }),
        { numRuns: runs(200) },
      );
    },
    propertyTimeout,
  );
});

// Deliveries the service could send: any event name (known or not), odd ids, arbitrary JSON data.
const deliveryArb = fc.record({
  event: fc.oneof(fc.constantFrom(...EVENT_NAMES), fc.stringMatching(/^[a-z_]{1,12}\.[a-z_]{1,12}$/)),
  deliveryId: fc.string({ minLength: 1, maxLength: 40 }).map((s) => `wdl_${s}`),
  data: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })),
  space: fc.constantFrom(undefined, 0, 1, '\t'),
});
let unique = 0;

function encode(d: { event: string; deliveryId: string; data: unknown; space: string | number | undefined }) {
  // A counter keeps generated ids unique across runs (the same id twice is a duplicate, by design).
  const deliveryId = `${d.deliveryId}#${unique++}`;
  const text = JSON.stringify({ deliveryId, data: d.data, timestamp: new Date().toISOString(), event: d.event }, null, d.space);
  const body = new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>;
  return { deliveryId, body, expectedData: (JSON.parse(text) as { data: unknown }).data, signature: hmac(body, SECRET) };
}

type Send = (body: Uint8Array<ArrayBuffer>, headers: Record<string, string>) => Promise<number>;

describe('valid deliveries round-trip', () => {
  const servers: { close: () => Promise<void> }[] = [];
  const entry: Record<string, { send: Send; seen: ReturnType<typeof recordingReceiver>['seen'] }> = {};

  beforeAll(async () => {
    const direct = recordingReceiver();
    entry['receiver.handle'] = {
      seen: direct.seen,
      send: async (body, headers) => (await direct.receiver.handle({ body, headers })).status,
    };

    const viaFetch = recordingReceiver();
    entry['receiver.fetch'] = {
      seen: viaFetch.seen,
      send: async (body, headers) =>
        (await viaFetch.receiver.fetch(new Request('http://localhost/webhooks', { method: 'POST', body, headers }))).status,
    };

    const viaHono = recordingReceiver();
    const app = new Hono().post('/webhooks', honoHandler(viaHono.receiver));
    entry['@hookline/hono'] = {
      seen: viaHono.seen,
      send: async (body, headers) => (await app.request('/webhooks', { method: 'POST', body, headers })).status,
    };

    const post =
      (url: string): Send =>
      async (body, headers) =>
        (await fetch(url, { method: 'POST', body, headers })).status;
    const viaNode = recordingReceiver();
    const node = await nodeServer(viaNode.receiver);
    servers.push(node);
    entry['node:http bridge'] = { seen: viaNode.seen, send: post(node.url) };

    const viaExpress = recordingReceiver();
    const expressApp = express();
    expressApp.post('/webhooks', expressHandler(viaExpress.receiver));
    const expressServer = await listen(createServer(expressApp));
    servers.push(expressServer);
    entry['@hookline/express'] = { seen: viaExpress.seen, send: post(expressServer.url) };

    // Fastify's inject() drives the plugin through Fastify's own request pipeline, in process.
    const viaFastify = recordingReceiver();
    const fastify = Fastify();
    await fastify.register(webhookPlugin, { receiver: viaFastify.receiver, path: '/webhooks' });
    servers.push({ close: () => fastify.close() });
    entry['@hookline/fastify'] = {
      seen: viaFastify.seen,
      send: async (body, headers) =>
        (await fastify.inject({ method: 'POST', url: '/webhooks', payload: Buffer.from(body), headers })).statusCode,
    };

    // Next's App Router hands the route a Request; its Pages Router, node's req/res.
    const viaNextApp = recordingReceiver();
    const appRoute = webhookRoute(viaNextApp.receiver);
    entry['@hookline/next App Router'] = {
      seen: viaNextApp.seen,
      send: async (body, headers) => (await appRoute(new Request('http://localhost/webhooks', { method: 'POST', body, headers }))).status,
    };
    const viaNextPages = recordingReceiver();
    const pagesServer = await listen(createServer(webhookApiRoute(viaNextPages.receiver)));
    servers.push(pagesServer);
    entry['@hookline/next Pages Router'] = { seen: viaNextPages.seen, send: post(pagesServer.url) };

    const viaKoa = recordingReceiver();
    const koa = new Koa().use(koaMiddleware(viaKoa.receiver, { path: '/webhooks' }));
    const koaServer = await listen(createServer(koa.callback()));
    servers.push(koaServer);
    entry['@hookline/koa'] = { seen: viaKoa.seen, send: post(koaServer.url) };

    // h3 v2's fetch() runs its whole request path in process, like Hono's request().
    const viaH3 = recordingReceiver();
    const h3 = new H3().post('/webhooks', h3Handler(viaH3.receiver));
    entry['@hookline/h3'] = {
      seen: viaH3.seen,
      send: async (body, headers) => (await h3.fetch(new Request('http://localhost/webhooks', { method: 'POST', body, headers }))).status,
    };

    const viaNest = recordingReceiver();
    const nest = await NestFactory.create(HooklineModule.forRoot({ receiver: viaNest.receiver }), { logger: false });
    await nest.listen(0, '127.0.0.1');
    servers.push({ close: () => nest.close() });
    entry['@hookline/nestjs'] = { seen: viaNest.seen, send: post(`${(await nest.getUrl()).replace('[::1]', '127.0.0.1')}/webhooks`) };
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  const overHttp = ['node:http bridge', '@hookline/express', '@hookline/next Pages Router', '@hookline/koa', '@hookline/nestjs'];
  for (const name of [
    'receiver.handle',
    'receiver.fetch',
    '@hookline/hono',
    '@hookline/fastify',
    '@hookline/next App Router',
    '@hookline/h3',
    ...overHttp,
  ]) {
    const http = overHttp.includes(name);
    it(
      `through ${name}: the handler sees the same event, deliveryId and data`,
      async () => {
        const { send, seen } = entry[name]!;
        await fc.assert(
          fc.asyncProperty(deliveryArb, async (d) => {
            const { deliveryId, body, expectedData, signature } = encode(d);
            const status = await send(body, {
              'content-type': 'application/json',
              'x-service-signature': signature,
              'x-service-event': d.event,
              'x-service-delivery-id': deliveryId,
            });
            expect(status).toBe(200);
            const last = seen.at(-1);
            expect(last?.event).toBe(d.event);
            expect(last?.deliveryId).toBe(deliveryId);
            expect(last?.data).toStrictEqual(expectedData);
          }),
          // Over real HTTP the long run is a fifth of the cases: each is a loopback round trip.
          { numRuns: http ? runs(100, 20_000) : runs(200) },
        );
      },
      propertyTimeout,
    );
  }
});
