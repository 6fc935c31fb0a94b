// The scenario matrix against Next.js, App Router and Pages Router, on the lowest and the highest Next
// major `@hookline/next` claims (15 and 16), each served by a real `next build` + `next start` of
// test/fixtures/next-app (built once per major, both at once; reused while their sources are unchanged).
// startNextApp() checks that each server announces the major it stands for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildNextApp, NEXT_MAJORS, type NextMajor, type NextServer, startNextApp } from './support/next-app';
import { describeAdapterScenarios } from './support/scenarios';
import { MATRIX_MAX_BODY, type Run } from './support/test-receiver';
import { describeTransportScenarios } from './support/transport';

const servers = new Map<NextMajor, NextServer>();
beforeAll(async () => {
  // Both majors build and start side by side; all settle before a failure is reported, so afterAll
  // closes every server that did start.
  const started = await Promise.allSettled(
    NEXT_MAJORS.map(async (major) => {
      await buildNextApp(major);
      servers.set(major, await startNextApp(major));
    }),
  );
  for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
}, 300_000);
afterAll(async () => {
  await Promise.all([...servers.values()].map((server) => server.close()));
});

for (const major of NEXT_MAJORS) {
  const server = () => servers.get(major)!;
  const runs = async (): Promise<Run[]> => {
    const response = await fetch(`${server().base}/runs`);
    return (await response.json()) as Run[];
  };

  describeAdapterScenarios(`Next ${major} App Router`, () => ({
    url: `${server().base}/webhooks`,
    slowUrl: `${server().base}/slow`,
    misconfiguredUrl: `${server().base}/misconfigured`,
    fixHint: 'request.clone()',
    runs,
  }));

  describeAdapterScenarios(`Next ${major} Pages Router`, () => ({
    url: `${server().base}/api/webhooks`,
    slowUrl: `${server().base}/api/slow`,
    misconfiguredUrl: `${server().base}/api/misconfigured`,
    fixHint: 'bodyParser: false',
    runs,
  }));

  // 405, 408 and, where hookline holds node's connection (Pages Router), the lingering close.
  const port = () => Number(new URL(server().base).port);
  describeTransportScenarios(
    `Next ${major} App Router`,
    () => ({
      port: port(),
      path: '/webhooks',
      slowPath: '/slow',
      maxBodyBytes: MATRIX_MAX_BODY,
      lingers: false, // Next writes the answer and owns the connection
    }),
    { lingers: false },
  );
  describeTransportScenarios(`Next ${major} Pages Router`, () => ({
    port: port(),
    path: '/api/webhooks',
    slowPath: '/api/slow',
    maxBodyBytes: MATRIX_MAX_BODY,
    pid: server().pid,
    rssBoundMb: 128,
    lingers: true,
  }));
}

// The fixture app was built (beforeAll) with a route whose secret is unset: `next build` loads route
// modules to collect page data, so a receiver that threw at start-up would have failed the build.
describe.each(NEXT_MAJORS)('Next %i: a route whose secret is unset at build and at run time', (major) => {
  it('builds, and answers every delivery 500 CONFIGURATION_ERROR naming the fix', async () => {
    const response = await fetch(`${servers.get(major)!.base}/unset-secret`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': 'a'.repeat(64) },
      body: '{}',
    });
    expect(response.status).toBe(500);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('CONFIGURATION_ERROR');
    expect(error.message).toMatch(/signingSecret/);
  });
});
