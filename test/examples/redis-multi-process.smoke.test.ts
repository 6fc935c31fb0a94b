// examples/redis-multi-process runs as a user starts it (two receiver processes sharing one Redis) and
// handles a delivery sent to both processes at the same instant exactly once.
import { randomUUID } from 'node:crypto';
import { createDelivery, createSignedPayload } from '@hookline/testing';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, requireRedis } from '../support/servers';
import { EXAMPLE_SECRET, type RunningExample, startExample } from './support/run-example';

const redis = await requireRedis();
// Every run has its own key prefix, so runs sharing one Redis never see each other's records.
const prefix = `hookline-example-smoke-${randomUUID()}:`;

interface Answer {
  url: string;
  status: number;
  body: unknown;
  retryAfter: string | null;
}

async function send(url: string, payload: { headers: Record<string, string>; body: string | Uint8Array }): Promise<Answer> {
  // A copy, so fetch gets an ArrayBuffer-backed view whatever the payload's buffer is.
  const body = typeof payload.body === 'string' ? payload.body : new Uint8Array(payload.body);
  const response = await fetch(url, { method: 'POST', headers: payload.headers, body });
  return { url, status: response.status, body: await response.json(), retryAfter: response.headers.get('retry-after') };
}

const portOf = (url: string) => Number(new URL(url).port);

describe.skipIf(!redis.reachable)('examples/redis-multi-process', () => {
  let example: RunningExample;
  beforeAll(async () => {
    example = await startExample('redis-multi-process', { ports: 2, env: { REDIS_URL, REDIS_PREFIX: prefix } });
  }, 120_000);
  afterAll(async () => {
    await example?.stop();
    // Every record the two processes wrote is under this run's prefix (SCAN: the shared Redis may be large).
    const admin = await createClient({ url: REDIS_URL }).connect();
    for await (const keys of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 1_000 })) {
      if (keys.length > 0) await admin.unlink(keys);
    }
    await admin.close();
  });

  /**
   * Waits until every line both processes printed so far has been read: each process writes its lines
   * in order, so once a fresh delivery's line from a process is here, all its earlier lines are too.
   */
  async function drain(): Promise<void> {
    await Promise.all(
      example.urls.map(async (url) => {
        const payload = createSignedPayload(createDelivery('message.read'), EXAMPLE_SECRET);
        expect((await send(url, payload)).status).toBe(200);
        const line = await example.lineFor(payload.headers['x-service-delivery-id']!);
        expect(line.port).toBe(portOf(url));
      }),
    );
  }

  it('listens on PORT and PORT+1', () => {
    expect(example.urls.map(portOf)).toEqual([portOf(example.url), portOf(example.url) + 1]);
  });

  it('runs a delivery sent to both processes at once exactly once, and answers its repeats as duplicates', async () => {
    // Many deliveries in parallel, each sent to both processes at the same instant, so some pairs
    // overlap while the first claim is still running (409) and others arrive after it completed.
    const payloads = Array.from({ length: 20 }, () => createSignedPayload(createDelivery('message.delivered'), EXAMPLE_SECRET));
    const pairs = await Promise.all(payloads.map((payload) => Promise.all(example.urls.map((url) => send(url, payload)))));

    for (const answers of pairs) {
      // "What the receiver answers": one attempt runs the handlers and answers {"ok":true}; the other
      // finds the delivery completed (200 duplicate) or still running in the other process (409).
      const ran = answers.filter((a) => a.status === 200 && JSON.stringify(a.body) === '{"ok":true}');
      expect(ran).toHaveLength(1);
      const other = answers.find((a) => a !== ran[0])!;
      if (other.status === 200) {
        expect(other.body).toEqual({ ok: true, duplicate: true });
      } else {
        expect(other.status).toBe(409);
        expect(other.body).toMatchObject({ error: { code: 'CONFLICT' } });
        expect(other.retryAfter).toMatch(/^\d+$/);
      }
    }

    // Again, to both: the shared store remembers the completion whichever process recorded it.
    const repeats = await Promise.all(payloads.map((payload) => Promise.all(example.urls.map((url) => send(url, payload)))));
    for (const answers of repeats) {
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual({ ok: true, duplicate: true });
      }
    }

    await drain();
    for (const [i, payload] of payloads.entries()) {
      const deliveryId = payload.headers['x-service-delivery-id']!;
      const lines = example.lines().filter((line) => line.deliveryId === deliveryId);
      expect(lines).toHaveLength(1);
      // The line comes from the process that answered {"ok":true}.
      const ranOn = pairs[i]!.find((a) => JSON.stringify(a.body) === '{"ok":true}')!;
      expect(lines[0]).toEqual({ event: 'message.delivered', deliveryId, port: portOf(ranOn.url) });
    }
  });

  it('answers a delivery completed by one process as a duplicate on the other', async () => {
    const payload = createSignedPayload(createDelivery('message.failed'), EXAMPLE_SECRET);
    const [first, second] = example.urls;
    expect(await send(first!, payload)).toMatchObject({ status: 200, body: { ok: true } });
    expect(await send(second!, payload)).toMatchObject({ status: 200, body: { ok: true, duplicate: true } });
    await drain();
    const deliveryId = payload.headers['x-service-delivery-id']!;
    expect(example.lines().filter((line) => line.deliveryId === deliveryId)).toEqual([
      { event: 'message.failed', deliveryId, port: portOf(first!) },
    ]);
  });

  it('refuses a delivery signed with another secret with 401 on both processes', async () => {
    const payload = createSignedPayload(createDelivery('message.delivered'), 'whsec_not_the_example_secret');
    for (const url of example.urls) expect((await send(url, payload)).status).toBe(401);
  });
});
