// The scenario matrix against the in-process adapters (Next.js has its own file: it needs a build).
import { afterAll } from 'vitest';
import { describeAdapterScenarios } from './support/scenarios';
import { type RunningTarget, startExpress, startFastify, startH3, startHono, startKoa, startNest, startNodeHttp } from './support/targets';

const running: RunningTarget[] = [];
const track = (start: () => Promise<RunningTarget>) => async () => {
  const target = await start();
  running.push(target);
  return target;
};
afterAll(async () => {
  await Promise.all(running.map((target) => target.close()));
});

describeAdapterScenarios(
  'Express 4',
  track(() => startExpress(4)),
);
describeAdapterScenarios(
  'Express 5',
  track(() => startExpress(5)),
);
describeAdapterScenarios('Hono on @hono/node-server', track(startHono));
describeAdapterScenarios('Fastify', track(startFastify));
describeAdapterScenarios('node:http (createNodeHandler)', track(startNodeHttp));
describeAdapterScenarios(
  'Koa 2 (app.use with a path, before koa-bodyparser)',
  track(() => startKoa(2)),
);
describeAdapterScenarios(
  'Koa 3 (@koa/router, before koa-bodyparser)',
  track(() => startKoa(3)),
);
describeAdapterScenarios(
  'h3 v1 (createRouter, toNodeListener)',
  track(() => startH3(1)),
);
describeAdapterScenarios(
  'h3 v2 (H3, toNodeHandler)',
  track(() => startH3(2)),
);
describeAdapterScenarios(
  'NestJS on platform-express (JSON parser on, no rawBody)',
  track(() => startNest('express')),
);
describeAdapterScenarios(
  'NestJS on platform-fastify (rawBody: true)',
  track(() => startNest('fastify', { rawBody: true })),
);
