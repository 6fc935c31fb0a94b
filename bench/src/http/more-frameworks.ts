/**
 * The Koa, h3 and NestJS servers of the HTTP suite, each as `baseline` (the raw-body route a careful
 * developer writes by hand on that framework) or as the hookline adapter. Started by server.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Receiver } from '@hookline/core';
import { webhookHandler as h3Adapter } from '@hookline/h3';
import { webhookMiddleware as koaAdapter } from '@hookline/koa';
import { HooklineModule } from '@hookline/nestjs';
import { Controller, type DynamicModule, Module, Post, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { H3, toNodeHandler } from 'h3';
import { createApp, createRouter, readRawBody, toNodeListener } from 'h3-v1';
import Koa from 'koa';

/** What server.ts hands in: the receiver factory, the hand-written checks, the body reader and the meter. */
export interface FrameworkKit {
  receiver(): Receiver;
  /** HMAC-SHA256 and timingSafeEqual only, for a route whose framework already parsed the JSON. */
  verify(body: Uint8Array, signature: string | string[] | null | undefined): boolean;
  verifyAndParse(body: Uint8Array, signature: string | string[] | null | undefined): boolean;
  readBody(req: IncomingMessage, done: (body: Buffer | undefined) => void): void;
  count(): void;
}

const OK = '{"ok":true}';
const UNAUTHORIZED = '{"error":{"code":"INVALID_SIGNATURE","message":"bad signature"}}';
const JSON_TYPE = 'application/json';

export type Started = { port: number; close(): void };

async function listenNode(listener: (req: IncomingMessage, res: ServerResponse) => void, kit: FrameworkKit): Promise<Started> {
  const server: Server = createServer((req, res) => {
    kit.count();
    listener(req, res);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

/** Koa 3: the hand-written route reads ctx.req itself (no body parser on it), then answers through ctx. */
export function startKoa(adapter: boolean, kit: FrameworkKit): Promise<Started> {
  const app = new Koa();
  if (adapter) app.use(koaAdapter(kit.receiver(), { path: '/webhooks' }));
  else
    app.use(async (ctx) => {
      const body = await new Promise<Buffer | undefined>((resolve) => kit.readBody(ctx.req, resolve));
      const ok = body !== undefined && kit.verifyAndParse(body, ctx.get('x-service-signature'));
      ctx.status = ok ? 200 : 401;
      ctx.type = JSON_TYPE;
      ctx.body = ok ? OK : UNAUTHORIZED;
    });
  return listenNode(app.callback(), kit);
}

/** h3 v2 on node:http: the hand-written route reads h3's request (`event.req.arrayBuffer()`). */
export function startH3(adapter: boolean, kit: FrameworkKit): Promise<Started> {
  const app = new H3();
  if (adapter) app.post('/webhooks', h3Adapter(kit.receiver()));
  else
    app.post('/webhooks', async (event) => {
      const body = new Uint8Array(await event.req.arrayBuffer());
      const ok = kit.verifyAndParse(body, event.req.headers.get('x-service-signature'));
      event.res.status = ok ? 200 : 401;
      event.res.headers.set('content-type', JSON_TYPE);
      return ok ? OK : UNAUTHORIZED;
    });
  return listenNode(toNodeHandler(app), kit);
}

/** h3 v1 on node:http: the hand-written route uses h3's readRawBody(event, false). */
export function startH3v1(adapter: boolean, kit: FrameworkKit): Promise<Started> {
  const app = createApp();
  const router = createRouter();
  if (adapter) router.post('/webhooks', h3Adapter(kit.receiver()));
  else
    router.post('/webhooks', async (event) => {
      const body = (await readRawBody(event, false)) ?? Buffer.alloc(0);
      const ok = kit.verifyAndParse(body, event.node.req.headers['x-service-signature']);
      event.node.res.statusCode = ok ? 200 : 401;
      event.node.res.setHeader('content-type', JSON_TYPE);
      return ok ? OK : UNAUTHORIZED;
    });
  app.use(router);
  return listenNode(toNodeListener(app), kit);
}

type RawRequest = { rawBody?: Buffer; body?: unknown; headers: Record<string, string | string[] | undefined> };

/**
 * NestJS's documented raw-body recipe, by hand: `rawBody: true` and a controller reading
 * `req.rawBody` (Express's `res` or Fastify's `reply`). Nest's JSON parser has already parsed those
 * bytes into `req.body`, so the controller checks the signature and uses that: JSON is parsed once,
 * as in every other route of the suite. The decorators are applied as calls so the file needs no
 * decorator syntax.
 */
function handWrittenModule(kit: FrameworkKit, platform: 'express' | 'fastify'): DynamicModule {
  class WebhookController {
    handle(
      req: RawRequest,
      res: {
        status?(code: number): unknown;
        code?(code: number): unknown;
        type?(t: string): unknown;
        header?(n: string, v: string): unknown;
        send(body: string): unknown;
      },
    ) {
      const ok = req.rawBody !== undefined && req.body !== undefined && kit.verify(req.rawBody, req.headers['x-service-signature']);
      if (platform === 'express') {
        res.status?.(ok ? 200 : 401);
        res.type?.(JSON_TYPE);
      } else {
        res.code?.(ok ? 200 : 401);
        res.header?.('content-type', JSON_TYPE);
      }
      res.send(ok ? OK : UNAUTHORIZED);
    }
  }
  const proto = WebhookController.prototype;
  Post('webhooks')(proto, 'handle', Object.getOwnPropertyDescriptor(proto, 'handle') as PropertyDescriptor);
  Req()(proto, 'handle', 0);
  Res()(proto, 'handle', 1);
  Controller()(WebhookController);
  class BaselineModule {}
  Module({ controllers: [WebhookController] })(BaselineModule);
  return { module: BaselineModule };
}

/** NestJS 12 on platform-express or platform-fastify, its JSON parser on in both variants. */
export async function startNest(adapter: boolean, kit: FrameworkKit, platform: 'express' | 'fastify'): Promise<Started> {
  const module = adapter ? HooklineModule.forRoot({ receiver: kit.receiver(), path: '/webhooks' }) : handWrittenModule(kit, platform);
  const httpAdapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter();
  const app = await NestFactory.create(module, httpAdapter, { logger: false, rawBody: !adapter });
  // Counted on node's server, so the route ahead of Nest's pipeline and the controller count alike.
  const server = app.getHttpServer() as Server;
  server.on('request', () => kit.count());
  await app.listen(0, '127.0.0.1');
  server.keepAliveTimeout = 60_000;
  return { port: (server.address() as AddressInfo).port, close: () => void app.close() };
}
