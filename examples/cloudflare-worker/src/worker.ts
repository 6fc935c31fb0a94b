/**
 * A webhook receiver on Cloudflare Workers, with Hono, de-duplicating in Durable Objects: POST /webhooks,
 * one JSON line per handler run (`wrangler tail` shows them). `wrangler dev` runs it locally,
 * `wrangler deploy` publishes it (wrangler.toml binds the Durable Object class exported below).
 */
import { type DurableObjectNamespaceLike, durableObjectStore } from '@hookline/cloudflare';
import { createReceiver, type Receiver } from '@hookline/core';
import { webhookHandler } from '@hookline/hono';
import { type Handler, Hono } from 'hono';

// The class the HOOKLINE_STORE binding names: each instance keeps the records of one shard of keys.
export { HooklineStoreObject } from '@hookline/cloudflare';

interface Env {
  WEBHOOK_SECRET: string;
  HOOKLINE_STORE: DurableObjectNamespaceLike;
}

let receiver: Receiver | undefined;
let handle: Handler<{ Bindings: Env }> | undefined;

/** Made on the first request (bindings come with it) and kept for the isolate's life. */
function receiverFor(env: Env): Receiver {
  if (receiver === undefined) {
    receiver = createReceiver({ secret: env.WEBHOOK_SECRET, store: durableObjectStore({ client: env.HOOKLINE_STORE }) });
    receiver.on('*', async (delivery) => {
      console.log(JSON.stringify({ event: delivery.event, deliveryId: delivery.deliveryId }));
    });
  }
  return receiver;
}

const app = new Hono<{ Bindings: Env }>();
app.all('/webhooks', (c, next) => {
  handle ??= webhookHandler(receiverFor(c.env));
  return handle(c, next);
});

export default app;
