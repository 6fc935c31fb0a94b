import { describe, expectTypeOf, it } from 'vitest';
import type { Delivery, MessageDeliveredData } from '@hookline/core';
import { createDelivery } from './create-delivery';
import { fixtures } from './fixtures';

describe('createDelivery types', () => {
  it('types data by the ServiceEvents map', () => {
    const delivered = createDelivery('message.delivered');
    expectTypeOf(delivered).toEqualTypeOf<Delivery<'message.delivered', MessageDeliveredData>>();
    expectTypeOf(createDelivery('call.completed').data.durationSeconds).toEqualTypeOf<number>();
    expectTypeOf(createDelivery('group.created').data).toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf(fixtures['message.delivered'].data.deliveredAt).toEqualTypeOf<string>();
  });

  it('checks documented fields and still allows unknown events', () => {
    // @ts-expect-error durationSeconds is a number
    createDelivery('call.completed', { durationSeconds: 'long' }, undefined).data.durationSeconds satisfies number;
    expectTypeOf(createDelivery('voicemail.transcribed', { text: 'hi' }).data).toEqualTypeOf<{ text: string }>();
  });
});
