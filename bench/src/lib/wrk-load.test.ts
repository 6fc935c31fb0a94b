import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '@hookline/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCH_SECRET } from './payloads';
import { wrkVersion } from './wrk';
import { runFreshWrk } from './wrk-load';

const installed = wrkVersion() !== undefined;
if (!installed) {
  if (process.env.CI) throw new Error('wrk-load test: wrk is not installed (apt-get install wrk); CI must run it');
  console.warn('skipping the wrk-load test: wrk is not installed (apt-get install wrk)');
}

// A receiver that checks what the stores suite relies on: every request a validly signed delivery
// whose id was never sent before, with the headers agreeing with the body.
const seen = new Set<string>();
const problems: string[] = [];
let server: Server;
let port = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const { deliveryId, event } = JSON.parse(body.toString('utf8')) as { deliveryId: string; event: string };
      if (!(await verifySignature(body, req.headers['x-service-signature'] as string, BENCH_SECRET)))
        problems.push(`bad signature on ${deliveryId}`);
      if (req.headers['x-service-delivery-id'] !== deliveryId || req.headers['x-service-event'] !== event)
        problems.push(`headers disagree on ${deliveryId}`);
      if (seen.has(deliveryId)) problems.push(`${deliveryId} sent twice`);
      seen.add(deliveryId);
      res.writeHead(seen.size % 50 === 0 ? 503 : 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

describe.skipIf(!installed)('wrk with fresh deliveries (the stores suite load generator)', () => {
  it('sends only validly signed deliveries, each id once, and reads what wrk printed', async () => {
    let signed = false;
    const result = await runFreshWrk(port, 1, 4, () => {
      signed = true;
    });
    expect(signed).toBe(true);
    expect(problems).toEqual([]);
    expect(seen.size).toBeGreaterThan(100);
    // wrk counts the answers it read: never more than the server answered.
    expect(result.total).toBeGreaterThan(0);
    expect(result.total).toBeLessThanOrEqual(seen.size);
    expect(result.requestsPerSecond).toBeGreaterThan(0);
    // One answer in 50 was a 503, and wrk says so.
    expect(result.non2xx).toBeGreaterThan(0);
    expect(result.non2xx).toBeLessThanOrEqual(Math.ceil(seen.size / 50));
    expect(result.errors).toBe(0);
    expect(result.p50).toBeGreaterThan(0);
    expect(result.p99).toBeGreaterThanOrEqual(result.p50);
    expect(result.cpuMicros).toBeGreaterThan(0);
  });
});
