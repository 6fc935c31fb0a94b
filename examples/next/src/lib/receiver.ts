// One receiver for the app. WEBHOOK_SECRET comes from the environment (.env.local or the shell).
import { createReceiver } from '@hookline/core';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');

export const receiver = createReceiver({ secret });

receiver.on('message.delivered', async ({ data }) => {
  // data is typed: messageId, from, to, lineId, deliveredAt. Do the real work here, then return.
  void data.deliveredAt;
});
receiver.on('*', (delivery) => {
  process.stdout.write(`${JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId })}\n`);
});
