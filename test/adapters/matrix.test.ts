// The scenario matrix against the in-process adapters (Next.js has its own file: it needs a build).
import { afterAll } from 'vitest';
import { describeAdapterScenarios } from './support/scenarios';
import { type RunningTarget, startExpress, startFastify, startHono, startNodeHttp } from './support/targets';

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
