import type { HandlerContext } from '@hookline/core';
import type { OnModuleInit } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { ON_DELIVERY_EVENTS } from './on-delivery';
import type { HooklineReceiver } from './options';

type Register = (events: readonly string[], handler: (delivery: unknown, context: HandlerContext) => unknown) => unknown;

/**
 * At start-up, finds every provider method decorated with `@OnDelivery` and registers it on the
 * receiver, bound to the provider's instance. Runs in `onModuleInit`, before the app listens, so no
 * delivery can arrive before its handlers are in place. Built by a factory provider, like HooklineRoute.
 */
export class DeliveryExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly receiver: HooklineReceiver,
  ) {}

  onModuleInit(): void {
    const register = this.receiver.on.bind(this.receiver) as unknown as Register;
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (typeof instance !== 'object' || instance === null) continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = (instance as Record<string, unknown>)[name];
        if (typeof method !== 'function') continue;
        const events = this.reflector.get<readonly string[] | undefined>(ON_DELIVERY_EVENTS, method as () => unknown);
        if (events === undefined) continue;
        if (!wrapper.isDependencyTreeStatic()) {
          throw new Error(
            `@OnDelivery on ${wrapper.name}.${name}: handlers must live on singleton providers (not request- or transient-scoped).`,
          );
        }
        register(events, (delivery, context) => method.call(instance, delivery, context));
      }
    }
  }
}
