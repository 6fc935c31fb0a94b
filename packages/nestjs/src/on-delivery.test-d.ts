import { createReceiver, type DeliveryOf, type ServiceEvents, type UnknownDelivery } from '@hookline/core';
import { describe, expectTypeOf, it } from 'vitest';
import { HooklineModule } from './hookline-module';
import { OnDelivery } from './on-delivery';

type Delivered = DeliveryOf<ServiceEvents, 'message.delivered'>;

describe('@OnDelivery types', () => {
  it("accepts methods that take the pattern's deliveries, and refuses others", () => {
    class Handlers {
      @OnDelivery('message.delivered')
      exact(_delivery: Delivered): void {}

      @OnDelivery(['message.delivered', 'message.read'])
      listed(delivery: DeliveryOf<ServiceEvents, 'message.delivered' | 'message.read'>): string {
        return delivery.event;
      }

      @OnDelivery('*')
      anything(_delivery: UnknownDelivery): void {}

      @OnDelivery('message.delivered')
      noArguments(): Promise<void> {
        return Promise.resolve();
      }

      // @ts-expect-error a call.completed delivery is not what message.delivered brings
      @OnDelivery('message.delivered')
      wrongEvent(_delivery: DeliveryOf<ServiceEvents, 'call.completed'>): void {}
    }
    expectTypeOf(Handlers).toBeConstructibleWith();
  });

  it('refuses event names outside the catalogue other than through "*"', () => {
    // @ts-expect-error not an event name, a list of them, a group wildcard or '*'
    OnDelivery('message.teleported');
  });

  it('takes any receiver createReceiver() builds, typed or not', () => {
    type Custom = ServiceEvents & { 'custom.event': { id: string } };
    HooklineModule.forRoot({ receiver: createReceiver({ secret: 'whsec_x' }) });
    HooklineModule.forRoot({ receiver: createReceiver<Custom>({ secret: 'whsec_x' }), path: '/hooks' });
    HooklineModule.forRootAsync({ inject: ['SECRET'], useFactory: (secret: string) => ({ receiver: createReceiver({ secret }) }) });
  });
});
