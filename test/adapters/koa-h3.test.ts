// What only Koa and h3 have: Koa's body parsers and ctx, h3 v1's raw-body cache, h3 v2's Web request,
// node's request behind it, and its body limit. Over real HTTP on 127.0.0.1.
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import Router from '@koa/router';
import { webhookHandler } from '@hookline/h3';
import { webhookMiddleware } from '@hookline/koa';
import express from 'express';
import { bodyLimit, fromNodeHandler, H3, readRawBody, toNodeHandler } from 'h3';
import { createApp, readBody as readBodyV1, toNodeListener, useBase } from 'h3-v1';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import { afterEach, describe, expect, it } from 'vitest';
import { createSignedDelivery } from './support/deliveries';
import { post, postSlowly } from './support/http';
import { closeServer, listen } from './support/targets';
import { createTestReceiver, type Run, SLOW_BODY_TIMEOUT_MS } from './support/test-receiver';

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(closeServer));
});

async function serve(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  return listen(server);
}

function recording(options: { bodyTimeoutMs?: number } = {}) {
  const runs: Run[] = [];
  const receiver = createTestReceiver((run) => runs.push(run), options);
  return { receiver, notes: () => runs.filter((run) => run.outcome === 'started').map((run) => run.note) };
}

describe('Koa', () => {
  it('takes the Buffer a raw parser left in ctx.request.body', async () => {
    const { receiver, notes } = recording();
    const app = new Koa();
    app.use(async (ctx, next) => {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
      (ctx.request as { body?: unknown }).body = Buffer.concat(chunks);
      await next();
    });
    app.use(webhookMiddleware(receiver, { path: '/webhooks' }));
    const base = await serve(app.callback());
    const delivery = createSignedDelivery({ bom: true, controls: { note: 'Grüße' } });
    expect((await post(`${base}/webhooks`, delivery.body, delivery.headers)).status).toBe(200);
    expect(notes()).toEqual(['Grüße']);
  });

  it('works behind koa-bodyparser when the path sets ctx.disableBodyParser (the fix the error names)', async () => {
    const { receiver, notes } = recording();
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (ctx.path === '/webhooks') ctx.disableBodyParser = true;
      await next();
    });
    app.use(bodyParser());
    app.use(new Router().post('/webhooks', webhookMiddleware(receiver)).routes());
    const base = await serve(app.callback());
    const delivery = createSignedDelivery({ bom: true, controls: { note: 'after the parser' } });
    expect((await post(`${base}/webhooks`, delivery.body, delivery.headers)).status).toBe(200);
    expect(notes()).toEqual(['after the parser']);
  });

  it('passes other paths on with next(), answers 405 to a GET on its path, and ctx.status reads the status sent', async () => {
    const { receiver } = recording();
    const seen: number[] = [];
    const app = new Koa();
    app.use(async (ctx, next) => {
      await next();
      seen.push(ctx.status); // what a logging middleware reads
    });
    app.use(webhookMiddleware(receiver, { path: '/webhooks' }));
    app.use(bodyParser());
    app.use((ctx) => {
      ctx.body = { parsed: (ctx.request as { body?: unknown }).body };
    });
    const base = await serve(app.callback());
    const echo = await post(`${base}/api/echo`, '{"hello":"world"}', { 'content-type': 'application/json' });
    expect(echo.json).toEqual({ parsed: { hello: 'world' } });
    const get = await fetch(`${base}/webhooks`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const delivery = createSignedDelivery();
    expect((await post(`${base}/webhooks`, delivery.body, { ...delivery.headers, 'x-service-signature': '0'.repeat(64) })).status).toBe(
      401,
    );
    expect(seen).toEqual([200, 405, 401]);
  });
});

describe('h3 v1', () => {
  it("uses the raw bytes h3's own readBody() cached when a middleware parsed the body first", async () => {
    const { receiver, notes } = recording();
    const app = createApp();
    let parsed: unknown;
    app.use(
      useBase('/webhooks', async (event) => {
        parsed = await readBodyV1(event);
      }),
    );
    app.use('/webhooks', webhookHandler(receiver));
    const base = await serve(toNodeListener(app));
    const delivery = createSignedDelivery({ controls: { note: 'cached ✓' } }); // no BOM: h3's JSON parse would refuse it
    expect((await post(`${base}/webhooks`, delivery.body, delivery.headers)).status).toBe(200);
    expect(notes()).toEqual(['cached ✓']);
    expect(parsed).toMatchObject({ deliveryId: delivery.deliveryId });
  });

  it('answers 405 to a GET when mounted for every method', async () => {
    const app = createApp();
    app.use('/webhooks', webhookHandler(recording().receiver));
    const response = await fetch(`${await serve(toNodeListener(app))}/webhooks`);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('h3 v2', () => {
  it("keeps a tighter bodyLimit() in front of the route: h3's own 413", async () => {
    const app = new H3();
    app.post('/webhooks', webhookHandler(recording().receiver), { middleware: [bodyLimit(100)] });
    const delivery = createSignedDelivery();
    const answer = await post(`${await serve(toNodeHandler(app))}/webhooks`, delivery.body, delivery.headers);
    expect(answer.status).toBe(413);
  });

  it('keeps a tighter bodyLimit() for a chunked body too, where no Content-Length tells h3 the size first', async () => {
    const { receiver, notes } = recording();
    const app = new H3();
    app.post('/webhooks', webhookHandler(receiver), { middleware: [bodyLimit(100)] });
    const delivery = createSignedDelivery();
    // The whole body but one byte, chunked: h3's limit is passed long before it could end.
    const { answer } = await postSlowly(`${await serve(toNodeHandler(app))}/webhooks`, delivery.body, delivery.headers, {
      chunked: true,
      sentBytes: delivery.body.byteLength,
      timeoutMs: 10_000,
    });
    expect(answer?.status).toBe(413);
    expect(notes()).toEqual([]);
  });

  it("behind bodyLimit() (h3 reads the Web request's stream), a stalled body still gets hookline's 408 and connection: close", async () => {
    const { receiver } = recording({ bodyTimeoutMs: SLOW_BODY_TIMEOUT_MS });
    const app = new H3();
    app.post('/webhooks', webhookHandler(receiver), { middleware: [bodyLimit(64 * 1024)] });
    const delivery = createSignedDelivery();
    const { answer } = await postSlowly(`${await serve(toNodeHandler(app))}/webhooks`, delivery.body, delivery.headers, {
      chunked: true,
      sentBytes: delivery.body.byteLength / 2,
      timeoutMs: SLOW_BODY_TIMEOUT_MS + 10_000,
    });
    expect(answer?.status).toBe(408);
    expect(answer?.json.error).toMatchObject({ code: 'REQUEST_TIMEOUT', details: { limitMs: SLOW_BODY_TIMEOUT_MS } });
    expect(answer?.headers.connection).toBe('close');
  });

  it('answers a body a Node parser consumed in front of h3 (express.json() through fromNodeHandler) with the configuration error', async () => {
    const { receiver, notes } = recording();
    const app = new H3();
    const json = express.json();
    // h3 types node's request as HTTP/1 or HTTP/2; this server is HTTP/1, which is what express.json() takes.
    app.use(fromNodeHandler((req, res, next) => json(req as IncomingMessage, res as ServerResponse, next)));
    app.post('/webhooks', webhookHandler(receiver));
    const delivery = createSignedDelivery();
    const answer = await post(`${await serve(toNodeHandler(app))}/webhooks`, delivery.body, delivery.headers);
    expect(answer.status).toBe(500);
    expect(answer.json.error?.code).toBe('CONFIGURATION_ERROR');
    expect(answer.json.error?.message).toContain('mount the webhook route before');
    expect(notes()).toEqual([]);
  });

  it('refuses a body a middleware read with readRawBody() (h3 v2 keeps no copy), naming the fix', async () => {
    const { receiver, notes } = recording();
    const app = new H3();
    app.use(async (event) => {
      await readRawBody(event, false);
    });
    app.post('/webhooks', webhookHandler(receiver));
    const delivery = createSignedDelivery();
    const answer = await post(`${await serve(toNodeHandler(app))}/webhooks`, delivery.body, delivery.headers);
    expect(answer.status).toBe(500);
    expect(answer.json.error?.message).toContain('mount the webhook route before');
    expect(notes()).toEqual([]);
  });

  it("serves h3's fetch() (a Web Request, as on Bun, Deno, Workers) with the answer's status and headers", async () => {
    const { receiver, notes } = recording();
    const app = new H3().all('/webhooks', webhookHandler(receiver));
    const delivery = createSignedDelivery({ bom: true, controls: { note: 'fetch' } });
    const response = await app.fetch(
      new Request('http://localhost/webhooks', { method: 'POST', body: new Uint8Array(delivery.body), headers: delivery.headers }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ ok: true });
    expect(notes()).toEqual(['fetch']);
    const get = await app.fetch(new Request('http://localhost/webhooks'));
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});
