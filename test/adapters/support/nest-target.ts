// NestJS serving the test receiver through HooklineModule, with Nest's global JSON parser on. The
// misconfigured app loses the bytes the way each platform does: Express handed to Nest with
// express.json() already mounted; Fastify with an onRequest hook that drains the stream.
import { HooklineModule } from '@hookline/nestjs';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import express from 'express';
import type { RunningTarget } from './targets';
import { receivers } from './targets';
import type { Receiver } from '@hookline/core';
import type { MatrixEvents } from './test-receiver';

/** Which Nest platform, and whether the app is created with `rawBody: true`. */
export type NestPlatform = 'express' | 'fastify';

async function nestApp(platform: NestPlatform, receiver: Receiver<MatrixEvents>, rawBody: boolean, misconfigure: boolean) {
  const module = HooklineModule.forRoot({ receiver, path: '/webhooks' });
  let adapter: ExpressAdapter | FastifyAdapter;
  if (platform === 'express') {
    const instance = express();
    if (misconfigure) instance.use(express.json());
    adapter = new ExpressAdapter(instance);
  } else {
    adapter = new FastifyAdapter();
    if (misconfigure) {
      adapter.getInstance().addHook('onRequest', async (request) => {
        for await (const _chunk of request.raw) {
          // a logging hook that reads the body and forgets to hand it on
        }
      });
    }
  }
  const app = await NestFactory.create(module, adapter, { logger: false, rawBody });
  await app.listen(0, '127.0.0.1');
  return app;
}

const webhooksUrl = async (app: Awaited<ReturnType<typeof nestApp>>) => `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/webhooks`;

/**
 * Three Nest apps on one platform (one HooklineModule each): the good one (with `rawBody` as given),
 * the one with the small body-read time limit, mounted the same way, and the misconfigured one.
 */
export async function startNest(platform: NestPlatform, options: { rawBody?: boolean } = {}): Promise<RunningTarget> {
  const { runs, receiver, misconfigured, slow } = receivers();
  const good = await nestApp(platform, receiver, options.rawBody ?? false, false);
  const slowApp = await nestApp(platform, slow, options.rawBody ?? false, false);
  const bad = await nestApp(platform, misconfigured, options.rawBody ?? false, true);
  return {
    url: await webhooksUrl(good),
    slowUrl: await webhooksUrl(slowApp),
    misconfiguredUrl: await webhooksUrl(bad),
    fixHint: platform === 'express' ? 'rawBody: true' : 'onRequest',
    runs: async () => runs,
    close: async () => {
      await Promise.all([good.close(), slowApp.close(), bad.close()]);
    },
  };
}
