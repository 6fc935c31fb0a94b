import * as v from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { MessageDeliveredData } from './events';
import { createReceiver } from './receiver';

const receiver = createReceiver({ secret: 'whsec_x' });

describe('on() options types', () => {
  it("narrows data to a zod schema's output", () => {
    const schema = z.object({ messageId: z.string(), count: z.coerce.number() });
    receiver.on(
      'message.delivered',
      (delivery) => {
        expectTypeOf(delivery.data).toEqualTypeOf<{ messageId: string; count: number }>();
        expectTypeOf(delivery.event).toEqualTypeOf<'message.delivered'>();
      },
      { schema },
    );
  });

  it("narrows data to a valibot schema's output", () => {
    const schema = v.object({ text: v.string() });
    receiver.on('message.inbound', (delivery) => expectTypeOf(delivery.data).toEqualTypeOf<{ text: string }>(), { schema });
  });

  it('keeps the event data without a schema, and types the order guard on the delivery', () => {
    receiver.on('message.delivered', (delivery) => expectTypeOf(delivery.data).toEqualTypeOf<MessageDeliveredData>(), {
      name: 'lifecycle',
      order: {
        key: (delivery) => {
          expectTypeOf(delivery.data).toEqualTypeOf<MessageDeliveredData>();
          return delivery.data.messageId;
        },
        version: () => 2,
      },
    });
  });

  it('refuses unknown option values', () => {
    // @ts-expect-error: stale is 'skip' or 'run'
    receiver.on('message.read', () => {}, { name: 'r', order: { key: () => 'k', stale: 'drop' } });
    // @ts-expect-error: onInvalid is 'retry' or 'permanent'
    receiver.on('message.read', () => {}, { onInvalid: 'ignore' });
  });
});
