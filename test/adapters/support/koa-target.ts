// Koa 2 and 3 serving the test receiver: the webhook route ahead of koa-bodyparser, and a misconfigured
// route behind it (the parser has consumed the stream by the time hookline runs).
import { createServer } from 'node:http';
import Router from '@koa/router';
import { webhookMiddleware } from '@hookline/koa';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import bodyParser from 'koa-bodyparser';
import { closeServer, listen, type RunningTarget, receivers } from './targets';

/** Koa 3 mounts the route with @koa/router, Koa 2 with `app.use(…, { path })`: both styles are covered. */
export async function startKoa(version: 2 | 3): Promise<RunningTarget> {
  const { runs, receiver, misconfigured, slow } = receivers();
  const app = version === 3 ? new Koa3() : new Koa2();
  app.silent = true;
  if (version === 3) {
    const webhooks = new Router().post('/webhooks', webhookMiddleware(receiver)).post('/slow', webhookMiddleware(slow));
    app.use(webhooks.routes());
  } else {
    app.use(webhookMiddleware(receiver, { path: '/webhooks' }));
    app.use(webhookMiddleware(slow, { path: '/slow' }));
  }
  app.use(bodyParser());
  const late = new Router().post('/misconfigured', webhookMiddleware(misconfigured));
  app.use(late.routes());
  const server = createServer(app.callback());
  const base = await listen(server);
  return {
    url: `${base}/webhooks`,
    slowUrl: `${base}/slow`,
    misconfiguredUrl: `${base}/misconfigured`,
    fixHint: 'app.use(bodyParser())',
    runs: async () => runs,
    close: () => closeServer(server),
  };
}
