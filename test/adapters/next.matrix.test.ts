// The scenario matrix against Next.js, App Router and Pages Router, served by a real `next build`
// + `next start` of test/fixtures/next-app (built once; reused while its sources are unchanged).
import { afterAll, beforeAll } from 'vitest';
import { buildNextApp, type NextServer, startNextApp } from './support/next-app';
import { describeAdapterScenarios } from './support/scenarios';
import type { Run } from './support/test-receiver';

let server: NextServer | undefined;
beforeAll(async () => {
  buildNextApp();
  server = await startNextApp();
}, 180_000);
afterAll(async () => {
  await server?.close();
});

async function runs(): Promise<Run[]> {
  const response = await fetch(`${server!.base}/runs`);
  return (await response.json()) as Run[];
}

describeAdapterScenarios('Next.js App Router', () => ({
  url: `${server!.base}/webhooks`,
  misconfiguredUrl: `${server!.base}/misconfigured`,
  fixHint: 'request.clone()',
  runs,
}));

describeAdapterScenarios('Next.js Pages Router', () => ({
  url: `${server!.base}/api/webhooks`,
  misconfiguredUrl: `${server!.base}/api/misconfigured`,
  fixHint: 'bodyParser: false',
  runs,
}));
