// h3 v1 (Nuxt 3/4, Nitro 2) and v2 (Nitro 3) serving the test receiver on node:http. The misconfigured
// route sits behind what loses the bytes in each: a Node JSON parser in v1 (v1's own readBody keeps
// them), readBody() in v2.
import { createServer } from 'node:http';
import { webhookHandler } from '@hookline/h3';
import express from 'express';
import { H3, readBody, toNodeHandler } from 'h3';
import { createApp, createRouter, fromNodeMiddleware, toNodeListener } from 'h3-v1';
import { closeServer, listen, type RunningTarget, receivers } from './targets';

/** The part of the misconfiguration error both majors share. */
export const H3_FIX_HINT = 'mount the webhook route before';

export async function startH3(version: 1 | 2): Promise<RunningTarget> {
  const { runs, receiver, misconfigured, slow } = receivers();
  let listener: Parameters<typeof createServer>[1];
  if (version === 1) {
    const app = createApp();
    app.use('/misconfigured', fromNodeMiddleware(express.json()));
    const router = createRouter()
      .post('/webhooks', webhookHandler(receiver))
      .post('/slow', webhookHandler(slow))
      .post('/misconfigured', webhookHandler(misconfigured));
    app.use(router);
    listener = toNodeListener(app);
  } else {
    const app = new H3();
    app.use('/misconfigured', async (event) => {
      await readBody(event);
    });
    app.post('/webhooks', webhookHandler(receiver));
    app.post('/slow', webhookHandler(slow));
    app.post('/misconfigured', webhookHandler(misconfigured));
    listener = toNodeHandler(app);
  }
  const server = createServer(listener);
  const base = await listen(server);
  return {
    url: `${base}/webhooks`,
    slowUrl: `${base}/slow`,
    misconfiguredUrl: `${base}/misconfigured`,
    fixHint: H3_FIX_HINT,
    runs: async () => runs,
    close: () => closeServer(server),
  };
}
