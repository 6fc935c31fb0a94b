// What only NestJS has: the dynamic module under Nest's testing module, forRootAsync with a factory,
// @OnDelivery handlers as providers with their dependencies injected, both platforms with and without
// `rawBody: true` while Nest's JSON parser serves the app's own routes. Over real HTTP on 127.0.0.1.
import type { DeliveryOf, ServiceEvents } from '@hookline/core';
import { HOOKLINE_RECEIVER, HooklineModule, OnDelivery } from '@hookline/nestjs';
import { Controller, Inject, Injectable, type INestApplication, Module, Post } from '@nestjs/common';
import { NestFactory, REQUEST } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createSignedDelivery } from './support/deliveries';
import { post } from './support/http';
import { createTestReceiver, MATRIX_SECRET, type Run } from './support/test-receiver';

/** A dependency the handlers get injected (a repository, in a real app). */
class DeliveredLog {
  readonly messageIds: string[] = [];
}

// Property injection: the repository's lint cannot parse parameter decorators. Constructor injection
// (`constructor(private readonly log: DeliveredLog)`) is what the packed NestJS consumer project tests.
@Injectable()
class MessageHandlers {
  @Inject(DeliveredLog) private readonly log!: DeliveredLog;

  @OnDelivery('message.delivered')
  delivered({ data }: DeliveryOf<ServiceEvents, 'message.delivered'>): void {
    this.log.messageIds.push(data.messageId);
  }
}

/** Stands in for @nestjs/config's ConfigService. */
class SettingsService {
  get(key: 'WEBHOOK_SECRET'): string {
    return { WEBHOOK_SECRET: MATRIX_SECRET }[key];
  }
}

@Module({ providers: [SettingsService], exports: [SettingsService] })
class SettingsModule {}

/** One of the app's own routes: Nest's JSON parser must still parse its body (request-scoped, to reach the request without a parameter decorator). */
@Controller('api')
class EchoController {
  @Inject(REQUEST) private readonly request!: { body: unknown };

  @Post('echo')
  echo(): unknown {
    return { parsed: this.request.body };
  }
}

const apps: INestApplication[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function urlOf(app: INestApplication, path = '/webhooks'): Promise<string> {
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  return `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}${path}`;
}

describe('NestJS: the testing module, forRootAsync and @OnDelivery providers', () => {
  for (const platform of ['express', 'fastify'] as const) {
    it(`${platform}: the factory's receiver serves the route and runs the decorated handler with its dependency`, async () => {
      const runs: Run[] = [];
      const moduleRef = await Test.createTestingModule({
        imports: [
          HooklineModule.forRootAsync({
            imports: [SettingsModule],
            inject: [SettingsService],
            useFactory: (settings: SettingsService) => {
              expect(settings.get('WEBHOOK_SECRET')).toBe(MATRIX_SECRET);
              return { receiver: createTestReceiver((run) => runs.push(run)), path: '/hooks/service' };
            },
          }),
        ],
        controllers: [EchoController],
        providers: [DeliveredLog, MessageHandlers],
      }).compile();
      const app = moduleRef.createNestApplication(platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(), { logger: false });
      const url = await urlOf(app, '/hooks/service');

      const delivery = createSignedDelivery({ bom: true, controls: { note: 'Grüße 🎉' } });
      const answer = await post(url, delivery.body, delivery.headers);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      // The module's own test handler and the provider's decorated method both ran, once.
      expect(runs.filter((run) => run.outcome === 'started').map((run) => run.note)).toEqual(['Grüße 🎉']);
      expect(app.get(DeliveredLog).messageIds).toEqual([delivery.messageId]);
      expect((await post(url, delivery.body, delivery.headers)).json).toEqual({ ok: true, duplicate: true });
      expect(app.get(DeliveredLog).messageIds).toHaveLength(1);

      // The receiver is injectable, and Nest's JSON parser still serves the app's own routes.
      expect(app.get(HOOKLINE_RECEIVER).maxBodyBytes).toBe(64 * 1024);
      const echo = await post(url.replace('/hooks/service', '/api/echo'), '{"hello":"world"}', { 'content-type': 'application/json' });
      expect(echo.json).toEqual({ parsed: { hello: 'world' } });
    });
  }
});

describe.each([
  ['express', false],
  ['express', true],
  ['fastify', false],
  ['fastify', true],
] as const)('NestJS on platform-%s, rawBody: %s (NestFactory.create)', (platform, rawBody) => {
  it('verifies the exact bytes (a BOM, odd whitespace) with the global JSON parser on', async () => {
    const runs: Run[] = [];
    const receiver = createTestReceiver((run) => runs.push(run));
    const adapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter();
    const app = await NestFactory.create(HooklineModule.forRoot({ receiver }), adapter, { logger: false, rawBody });
    const url = await urlOf(app);
    const delivery = createSignedDelivery({ bom: true, controls: { note: 'nbsp\u00a0and\ttab' } });
    const answer = await post(url, delivery.body, { ...delivery.headers, 'content-type': 'application/json; charset=utf-8' });
    expect(answer.status).toBe(200);
    expect(runs.filter((run) => run.outcome === 'started').map((run) => run.note)).toEqual(['nbsp\u00a0and\ttab']);
  });

  it('closes the connection, rather than leaving the client waiting, when the receiver fails to answer', async () => {
    // receiver.handle() never rejects; a wrapper around it might. No answer can be written then.
    const inner = createTestReceiver(() => {});
    const receiver = Object.assign(Object.create(inner) as typeof inner, {
      handle: () => Promise.reject(new Error('a wrapper around handle() failed')),
    });
    const adapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter();
    const app = await NestFactory.create(HooklineModule.forRoot({ receiver }), adapter, { logger: false, rawBody });
    const delivery = createSignedDelivery();
    const outcome = await post(await urlOf(app), delivery.body, delivery.headers).then(
      (answer) => answer.status,
      () => 'connection closed',
    );
    // Express answers the rejected route with its error handler's 500; Fastify has handed the reply over.
    expect(outcome).toBe(platform === 'express' ? 500 : 'connection closed');
  });

  it('answers 405 with Allow: POST to a GET on the webhook path', async () => {
    const app = await NestFactory.create(
      HooklineModule.forRoot({ receiver: createTestReceiver(() => {}) }),
      platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
      { logger: false, rawBody },
    );
    const response = await fetch(await urlOf(app));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('METHOD_NOT_ALLOWED');
  });
});
