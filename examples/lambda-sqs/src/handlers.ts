// The handlers, the same in every set-up (deployed on SQS, or run locally on the in-memory queue).
import type { Receiver } from '@hookline/core';

/** A slow handler: what answer-fast mode is for. HANDLER_MS stands in for the real work. */
export function addHandlers(receiver: Receiver): void {
  const handlerMs = Number(process.env.HANDLER_MS ?? 0);
  receiver.on('*', async (delivery) => {
    if (handlerMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerMs));
    console.log(JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId }));
  });
}

/** Below the worker function's timeout (60 s in the README), with room for the hand-back. */
export const MAX_RUN_MS = 45_000;
