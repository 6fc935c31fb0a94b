import { describe, expectTypeOf, it } from 'vitest';
import type { CallCompletedData, Delivery, MessageDeliveredData, OpenData, UnknownDelivery } from './events';
import { createReceiver } from './receiver';

const receiver = createReceiver({ secret: 'whsec_x' });

describe('on() types', () => {
  it("types an exact event's delivery", () => {
    receiver.on('message.delivered', (delivery, context) => {
      expectTypeOf(delivery.event).toEqualTypeOf<'message.delivered'>();
      expectTypeOf(delivery.data).toEqualTypeOf<MessageDeliveredData>();
      expectTypeOf(delivery.data.messageId).toEqualTypeOf<string>();
      expectTypeOf(context.attempt).toEqualTypeOf<number>();
      expectTypeOf(context.signal).toEqualTypeOf<AbortSignal>();
    });
    receiver.on('call.completed', (delivery) => {
      expectTypeOf(delivery.data.durationSeconds).toEqualTypeOf<number>();
      expectTypeOf(delivery.data).toEqualTypeOf<CallCompletedData>();
    });
    receiver.on('group.renamed', (delivery) => {
      expectTypeOf(delivery.data).toEqualTypeOf<OpenData>();
    });
  });

  it('refuses a misspelt event name or a group that does not exist', () => {
    // @ts-expect-error: not an event of the catalogue
    receiver.on('message.delivred', () => {});
    // @ts-expect-error: the typo in the document's catalogue is not an event
    receiver.on('line.ban_recoveredLine', () => {});
    // @ts-expect-error: no such group
    receiver.on('sms.*', () => {});
  });

  it('types a group wildcard as the union of its group', () => {
    receiver.on('call.*', (delivery) => {
      expectTypeOf(delivery.event).toEqualTypeOf<
        'call.initiated' | 'call.ringing' | 'call.connected' | 'call.completed' | 'call.no_answer' | 'call.failed'
      >();
      if (delivery.event === 'call.completed') expectTypeOf(delivery.data.durationSeconds).toEqualTypeOf<number>();
    });
    receiver.on('line.*', (delivery) => {
      expectTypeOf(delivery.event).toEqualTypeOf<'line.status_changed' | 'line.ban_detected' | 'line.ban_recovered'>();
    });
  });

  it('types an array as the union of its names', () => {
    receiver.on(['message.delivered', 'message.read'], (delivery) => {
      expectTypeOf(delivery.event).toEqualTypeOf<'message.delivered' | 'message.read'>();
    });
  });

  it('gives "*" every known delivery and unknown ones', () => {
    receiver.on('*', (delivery) => {
      expectTypeOf(delivery).toExtend<UnknownDelivery>();
      expectTypeOf(delivery.event).toEqualTypeOf<string>();
    });
  });

  it("accepts a user's wider event map", () => {
    type MyEvents = { 'message.inbound': { text: string; from: string }; 'voicemail.transcribed': { transcript: string } };
    const mine = createReceiver<MyEvents>({ secret: 'whsec_x' });
    mine.on('message.inbound', (delivery) => {
      expectTypeOf(delivery).toEqualTypeOf<Delivery<'message.inbound', { text: string; from: string }>>();
    });
    mine.on('voicemail.*', (delivery) => {
      expectTypeOf(delivery.data.transcript).toEqualTypeOf<string>();
    });
    // @ts-expect-error: not in MyEvents
    mine.on('message.delivered', () => {});
  });
});

describe('options types', () => {
  it('takes a logger with warn and error only (info is never called)', () => {
    createReceiver({ secret: 'whsec_x', logger: { warn: () => {}, error: () => {} } });
    // @ts-expect-error: error is required
    createReceiver({ secret: 'whsec_x', logger: { info: () => {}, warn: () => {} } });
  });
});
