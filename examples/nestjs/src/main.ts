/**
 * NestJS (platform-express) receiving the service's webhooks: PORT and WEBHOOK_SECRET from the
 * environment, 127.0.0.1:PORT, POST /webhooks, one JSON line on stdout per handler run. The app keeps
 * Nest's JSON parser on and is not created with rawBody: the module's route reads the bytes first.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-nestjs start
 */
import 'reflect-metadata';
import { createReceiver } from '@hookline/core';
import { HooklineModule } from '@hookline/nestjs';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DeliveryHandlers, DeliveryLog } from './delivery-handlers';

const port = Number(process.env.PORT ?? 3000);

/** Where the secret comes from (in a real app: @nestjs/config's ConfigService). */
class Settings {
  readonly webhookSecret = process.env.WEBHOOK_SECRET;
}

@Module({ providers: [Settings], exports: [Settings] })
class SettingsModule {}

@Module({
  imports: [
    HooklineModule.forRootAsync({
      imports: [SettingsModule],
      inject: [Settings],
      useFactory: ({ webhookSecret }: Settings) => {
        if (!webhookSecret) throw new Error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
        const receiver = createReceiver({ secret: webhookSecret });
        receiver.onError((error, info) => console.error(`[${info.phase}]`, error));
        return { receiver, path: '/webhooks' };
      },
    }),
  ],
  providers: [DeliveryLog, DeliveryHandlers],
})
class AppModule {}

if (!process.env.WEBHOOK_SECRET) {
  console.error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
  process.exit(2);
}
const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(port, '127.0.0.1');
console.error(`hookline NestJS example listening on http://127.0.0.1:${port}/webhooks`);
