import type { OnModuleDestroy } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import type { Subscription } from 'rxjs';
import { type HttpAdapterLike, mountRoute } from './mount-route';
import type { HooklineModuleOptions } from './options';

/**
 * Mounts the webhook route the moment Nest has an HTTP adapter: at once under `NestFactory.create()`
 * (the adapter exists before providers), at `createNestApplication()` under the testing module. Both
 * come before `app.init()` registers the body parsers. Without an HTTP adapter (an application
 * context) there is no route. Built by a factory provider (hookline-module.ts), so it needs neither
 * parameter decorators nor decorator metadata.
 */
export class HooklineRoute implements OnModuleDestroy {
  private readonly subscription: Subscription;

  constructor(host: HttpAdapterHost, options: HooklineModuleOptions) {
    this.subscription = host.init$.subscribe(() => mountRoute(host.httpAdapter as HttpAdapterLike, options));
  }

  onModuleDestroy(): void {
    this.subscription.unsubscribe();
  }
}
