import { describe, expect, it } from 'vitest';
import { createReceiver, EVENT_NAMES, verifySignature } from '@hookline/core';
import { createDelivery, serializeDelivery } from './create-delivery';
import { fixtures } from './fixtures';
import { FIXTURE_SECRET, RAW_FIXTURES } from './raw-fixtures';
import { sign } from './sign';
import { createSignedPayload, createSignedRequest } from './signed-request';

const secret = 'whsec_unit_secret';

describe('sign', () => {
  it('matches the independently computed signature of every raw fixture', () => {
    for (const fixture of RAW_FIXTURES) {
      expect(sign(fixture.body, FIXTURE_SECRET), fixture.name).toBe(fixture.signature);
      expect(sign(new TextEncoder().encode(fixture.body), FIXTURE_SECRET), fixture.name).toBe(fixture.signature);
    }
  });

  it('gives a different signature once the raw fixtures are re-serialised or mis-decoded', () => {
    const latin1 = RAW_FIXTURES.find((fixture) => fixture.name === 'non-ascii-compact')!;
    const misdecoded = Buffer.from(latin1.body, 'utf8').toString('latin1');
    expect(sign(Buffer.from(misdecoded, 'utf8'), FIXTURE_SECRET)).not.toBe(latin1.signature);
    for (const fixture of RAW_FIXTURES.filter((f) => f !== latin1)) {
      // What a receiver that parses and rebuilds the body would sign: canonical key order, compact.
      const reserialised = serializeDelivery(JSON.parse(fixture.body));
      expect(reserialised, fixture.name).not.toBe(fixture.body);
      expect(sign(reserialised, FIXTURE_SECRET), fixture.name).not.toBe(fixture.signature);
    }
  });

  it('is lowercase hex of 64 digits and refuses an empty secret', () => {
    expect(sign('', 'k')).toMatch(/^[0-9a-f]{64}$/);
    expect(() => sign('{}', '')).toThrow(/signingSecret/);
  });
});

describe('createDelivery', () => {
  it('fills a fresh wdl_ id, an ISO timestamp with milliseconds and the documented fields', () => {
    const a = createDelivery('message.delivered');
    const b = createDelivery('message.delivered');
    expect(a.deliveryId).toMatch(/^wdl_[0-9a-z]{24}$/);
    expect(a.deliveryId).not.toBe(b.deliveryId);
    expect(a.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(a.data.messageId).toMatch(/^msg_/);
    expect(a.data.messageId).not.toBe(b.data.messageId);
    expect(a.data.lineId).toMatch(/^lin_/);
    expect(a.data.from).toMatch(/^\+[1-9]\d{6,14}$/);
    expect(a.data.to).toMatch(/^\+[1-9]\d{6,14}$/);
    expect(a.data.deliveredAt).toBe(a.timestamp);
    expect(typeof createDelivery('call.completed').data.durationSeconds).toBe('number');
    expect(createDelivery('message.failed').data.reason).toBeTypeOf('string');
  });

  it('merges data over the defaults and takes overrides', () => {
    const delivery = createDelivery('message.delivered', { to: '+33612345678' }, { deliveryId: 'wdl_pinned', timestamp: new Date(0) });
    expect(delivery).toMatchObject({ deliveryId: 'wdl_pinned', timestamp: '1970-01-01T00:00:00.000Z', data: { to: '+33612345678' } });
    expect(createDelivery('brand.new_event', { x: 1 }).data).toEqual({ x: 1 });
  });

  it('serialises in the service order, and one fixture exists per catalogue event', () => {
    expect(Object.keys(JSON.parse(serializeDelivery(fixtures['message.read'])))).toEqual(['event', 'timestamp', 'deliveryId', 'data']);
    expect(Object.keys(fixtures).sort()).toEqual([...EVENT_NAMES].sort());
    for (const [name, delivery] of Object.entries(fixtures)) expect(delivery.event).toBe(name);
  });
});

describe('createSignedRequest', () => {
  const receiver = createReceiver({ secret });
  receiver.onError(() => {});

  it('is accepted by the real receiver for every catalogue event', async () => {
    for (const event of EVENT_NAMES) {
      const response = await receiver.fetch(createSignedRequest('http://localhost/webhooks', createDelivery(event), secret));
      expect(response.status, event).toBe(200);
    }
  });

  it('carries the exact bytes and the three service headers', async () => {
    const delivery = createDelivery('message.read');
    const request = createSignedRequest('http://localhost/webhooks', delivery, secret);
    const body = new Uint8Array(await request.arrayBuffer());
    expect(request.method).toBe('POST');
    expect(new TextDecoder().decode(body)).toBe(serializeDelivery(delivery));
    expect(request.headers.get('x-service-event')).toBe('message.read');
    expect(request.headers.get('x-service-delivery-id')).toBe(delivery.deliveryId);
    expect(await verifySignature(body, request.headers.get('x-service-signature'), secret)).toBe(true);
  });

  it('sends raw fixtures byte for byte (a stale 400 after verifying, never a 401)', async () => {
    const fixtureReceiver = createReceiver({ secret: FIXTURE_SECRET, logger: false });
    fixtureReceiver.onError(() => {});
    for (const fixture of RAW_FIXTURES) {
      const response = await fixtureReceiver.fetch(createSignedRequest('http://localhost/webhooks', fixture.body, FIXTURE_SECRET));
      expect(response.status, fixture.name).toBe(400);
      const tampered = await fixtureReceiver.fetch(
        createSignedRequest('http://localhost/webhooks', fixture.body, FIXTURE_SECRET, {
          signature: sign(`${fixture.body.trim()} `, FIXTURE_SECRET),
        }),
      );
      expect(tampered.status, fixture.name).toBe(401);
    }
  });

  it('can omit or replace headers for negative tests', () => {
    const { headers } = createSignedPayload(createDelivery('message.sent'), secret, {
      signature: null,
      headers: { 'x-extra': '1', 'content-type': null },
    });
    expect(headers['x-service-signature']).toBeUndefined();
    expect(headers['content-type']).toBeUndefined();
    expect(headers['x-extra']).toBe('1');
  });
});
