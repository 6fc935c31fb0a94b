import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { startServiceEmulator, type ServiceEmulator } from '@hookline/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createServiceClient } from './create-service-client';

// The whole loop a developer runs, over real HTTP: the client creates a webhook on the emulator, a
// hookline receiver verifies the delivery the emulator signs with that webhook's secret, the attempt
// list shows it, and a replay is answered as a duplicate.
let emulator: ServiceEmulator;
let server: Server;
let receiverUrl: string;
let signingSecret = '';
const handled: string[] = [];

beforeAll(async () => {
  emulator = await startServiceEmulator();
  // The secret is known only once the webhook exists, and the webhook needs the receiver's URL first.
  const receiver = createReceiver({ secret: () => signingSecret });
  receiver.on('message.delivered', ({ deliveryId, data }) => {
    handled.push(`${deliveryId} ${data.messageId}`);
  });
  server = createServer(createNodeHandler(receiver, { path: '/webhooks' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
});

afterAll(async () => {
  await emulator.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('create → secret → a verified delivery → its attempt listed → a replay answered as a duplicate', async () => {
  const client = createServiceClient({ apiKey: emulator.apiKey, baseUrl: emulator.url });
  const webhook = await client.webhooks.create({ url: receiverUrl, events: ['message.delivered'] });
  signingSecret = webhook.signingSecret;

  const [delivery] = await emulator.emit('message.delivered', { to: '+447700900123' });
  expect(delivery).toBeDefined();
  expect(handled).toEqual([expect.stringMatching(new RegExp(`^${delivery!.deliveryId} msg_`))]);

  const attempts = await client.webhooks.deliveries(webhook.id);
  expect(attempts.data).toHaveLength(1);
  expect(attempts.data[0]).toMatchObject({
    deliveryId: delivery!.deliveryId,
    event: 'message.delivered',
    status: 'succeeded',
    responseCode: 200,
  });
  expect(attempts.data[0]!.latencyMs).toBeGreaterThan(0);

  const replayed = await client.webhooks.replay(webhook.id, delivery!.deliveryId);
  expect(replayed.attempt).toMatchObject({ deliveryId: delivery!.deliveryId, trigger: 'replay', responseCode: 200 });
  expect(JSON.parse(String((replayed.attempt as { responseBody: string }).responseBody))).toEqual({ ok: true, duplicate: true });
  expect(handled).toHaveLength(1); // the handler did not run twice
  expect((await client.webhooks.deliveries(webhook.id)).data.map((attempt) => attempt.attempt)).toEqual([2, 1]);
});
