import { expectTypeOf, it } from 'vitest';
import { type CreatedWebhook, createServiceClient, type DeliveryAttemptRecord, type ListResult, ServiceError, type Webhook } from './index';

const client = createServiceClient({ apiKey: 'sk_sandbox_x1', baseUrl: 'https://api.example.com' });

it('types events with the catalogue and the answers with what the service documents', () => {
  expectTypeOf(client.mode).toEqualTypeOf<'sandbox' | 'live'>();
  expectTypeOf(
    client.webhooks.create({ url: 'https://example.com', events: ['message.delivered', 'call.completed'] }),
  ).resolves.toEqualTypeOf<CreatedWebhook>();
  // @ts-expect-error: not a catalogue event
  void client.webhooks.create({ url: 'https://example.com', events: ['message.deliverd'] });
  // @ts-expect-error: events are required
  void client.webhooks.create({ url: 'https://example.com' });
  expectTypeOf<CreatedWebhook['signingSecret']>().toEqualTypeOf<string>();
  expectTypeOf<Webhook['isActive']>().toEqualTypeOf<boolean>();
  expectTypeOf<Webhook['createdAt']>().toEqualTypeOf<unknown>(); // not documented: kept, untyped
  expectTypeOf(client.webhooks.list()).resolves.toEqualTypeOf<ListResult<Webhook>>();
  expectTypeOf(client.webhooks.deliveries('whk_1')).resolves.toEqualTypeOf<ListResult<DeliveryAttemptRecord>>();
  expectTypeOf<DeliveryAttemptRecord['responseCode']>().toEqualTypeOf<number | null>();
  // @ts-expect-error: isActive is a boolean
  void client.webhooks.update('whk_1', { isActive: 'no' });
});

it('gives ServiceError its fields', () => {
  const error = new ServiceError({ status: 429, code: 'RATE_LIMITED', message: 'slow down', retryAfterMs: 1000 });
  expectTypeOf(error.status).toEqualTypeOf<number>();
  expectTypeOf(error.retryAfterMs).toEqualTypeOf<number | undefined>();
  expectTypeOf(error.requestId).toEqualTypeOf<string | undefined>();
  expectTypeOf(error.details).toEqualTypeOf<Record<string, unknown> | undefined>();
});
