import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, HttpAdapterHost, MetadataScanner, Reflector } from '@nestjs/core';
import { DeliveryExplorer } from './delivery-explorer';
import { HooklineRoute } from './hookline-route';
import {
  HOOKLINE_OPTIONS,
  HOOKLINE_RECEIVER,
  type HooklineModuleAsyncOptions,
  type HooklineModuleOptions,
  type HooklineReceiver,
} from './options';

const shared: Provider[] = [
  { provide: HOOKLINE_RECEIVER, useFactory: (options: HooklineModuleOptions) => options.receiver, inject: [HOOKLINE_OPTIONS] },
  {
    provide: HooklineRoute,
    useFactory: (host: HttpAdapterHost, options: HooklineModuleOptions) => new HooklineRoute(host, options),
    inject: [HttpAdapterHost, HOOKLINE_OPTIONS],
  },
  {
    provide: DeliveryExplorer,
    useFactory: (discovery: DiscoveryService, scanner: MetadataScanner, reflector: Reflector, receiver: HooklineReceiver) =>
      new DeliveryExplorer(discovery, scanner, reflector, receiver),
    inject: [DiscoveryService, MetadataScanner, Reflector, HOOKLINE_RECEIVER],
  },
];

/**
 * Serves a hookline receiver on a path of your Nest app (platform-express or platform-fastify) and
 * registers the `@OnDelivery` methods of your providers on it. The route reads the exact bytes
 * whether or not the app was created with `rawBody: true`, with Nest's JSON parser on.
 *
 * @example
 * @Module({ imports: [HooklineModule.forRoot({ receiver, path: '/webhooks' })], providers: [MessageHandlers] })
 * export class AppModule {}
 */
@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: Nest's dynamic modules are classes with static forRoot()/forRootAsync()
export class HooklineModule {
  /** The module with a receiver built up front. */
  static forRoot(options: HooklineModuleOptions): DynamicModule {
    return {
      module: HooklineModule,
      imports: [DiscoveryModule],
      providers: [{ provide: HOOKLINE_OPTIONS, useValue: options }, ...shared],
      exports: [HOOKLINE_RECEIVER],
    };
  }

  /**
   * The module with a receiver built by a factory, e.g. from `ConfigService`:
   * `forRootAsync({ imports: [ConfigModule], inject: [ConfigService], useFactory: (config) => ({ receiver: createReceiver({ secret: config.getOrThrow('WEBHOOK_SECRET') }) }) })`.
   */
  static forRootAsync(options: HooklineModuleAsyncOptions): DynamicModule {
    return {
      module: HooklineModule,
      imports: [DiscoveryModule, ...(options.imports ?? [])],
      providers: [{ provide: HOOKLINE_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] }, ...shared],
      exports: [HOOKLINE_RECEIVER],
    };
  }
}
