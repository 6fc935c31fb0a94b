// One receiver for the app. WEBHOOK_SECRET comes from the environment (.env.local or the shell) at run
// time. `next build` loads this module without it (CI and Docker builds rarely have runtime secrets):
// createReceiver does not throw then; were the secret still missing at run time, every delivery would
// be answered 500 CONFIGURATION_ERROR with the fix, and the error logged.
import { createReceiver } from '@hookline/core';

export const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET });

receiver.on('message.delivered', async ({ data }) => {
  // data is typed: messageId, from, to, lineId, deliveredAt. Do the real work here, then return.
  void data.deliveredAt;
});
receiver.on('*', (delivery) => {
  process.stdout.write(`${JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId })}\n`);
});
