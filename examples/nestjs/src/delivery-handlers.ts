import type { UnknownDelivery, DeliveryOf, ServiceEvents } from '@hookline/core';
import { OnDelivery } from '@hookline/nestjs';
import { Inject, Injectable } from '@nestjs/common';

/** Stands in for your database: where handled deliveries are recorded. */
@Injectable()
export class DeliveryLog {
  record(delivery: UnknownDelivery): void {
    process.stdout.write(`${JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId })}\n`);
  }
}

/** Handlers as a provider: discovered at start-up, registered on the module's receiver. */
@Injectable()
export class DeliveryHandlers {
  // tsx runs this example through esbuild, which emits no decorator metadata: the dependency is
  // injected by token. Built with tsc or `nest build` (emitDecoratorMetadata), plain constructor
  // injection works as usual.
  @Inject(DeliveryLog) private readonly log!: DeliveryLog;

  @OnDelivery('message.delivered')
  delivered(delivery: DeliveryOf<ServiceEvents, 'message.delivered'>): void {
    void delivery.data.messageId; // typed: messageId, from, to, lineId, deliveredAt
    this.log.record(delivery);
  }

  @OnDelivery('*')
  everythingElse(delivery: UnknownDelivery): void {
    if (delivery.event !== 'message.delivered') this.log.record(delivery);
  }
}
