import type { DeliveryFor, EventPattern, HandlerContext, ServiceEvents } from '@hookline/core';
import { SetMetadata } from '@nestjs/common';

/** The metadata key `@OnDelivery` sets on a method (read at start-up by the module). */
export const ON_DELIVERY_EVENTS = 'hookline:on-delivery';

/** A method `@OnDelivery(pattern)` accepts: it takes the deliveries that pattern matches. */
type DeliveryMethod<P extends string> = (delivery: DeliveryFor<ServiceEvents, P>, context: HandlerContext) => unknown;

/**
 * Registers the decorated method of a provider as a handler on the module's receiver, for an event
 * name, a list of names, a group wildcard (`'message.*'`) or `'*'`. The provider is a normal
 * singleton: its constructor gets its dependencies injected. The method's `delivery` parameter is
 * checked against the pattern's event types.
 *
 * @example
 * @Injectable()
 * export class MessageHandlers {
 *   constructor(@Inject(MessagesRepository) private readonly messages: MessagesRepository) {}
 *
 *   @OnDelivery('message.delivered')
 *   async delivered({ data }: DeliveryOf<ServiceEvents, 'message.delivered'>) {
 *     await this.messages.markDelivered(data.messageId, data.deliveredAt);
 *   }
 * }
 */
export function OnDelivery<P extends EventPattern<ServiceEvents>>(events: P | readonly P[]) {
  const names: readonly string[] = typeof events === 'string' ? [events] : events;
  const setMetadata = SetMetadata(ON_DELIVERY_EVENTS, names);
  return <M extends DeliveryMethod<P>>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<M>): void => {
    setMetadata(target, key, descriptor);
  };
}
