// Two tenants whose tenant id and deliveryId spell one text: tenant `acme:wdl_x` sends `wdl_e1`, tenant
// `acme` sends `wdl_x:wdl_e1`. Over HTTP, in synchronous mode on every store that runs in Node and in
// answer-fast mode on the memory queue, BullMQ and pg-boss, each delivery is its own: both answered as
// new, both handlers run. (Their keys once met, and the second was answered `200 duplicate`, unrun.)
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bullmqQueue } from '@hookline/bullmq';
import { createNodeHandler, createReceiver, type DeliveryQueue, type Receiver, type ReceiverOptions } from '@hookline/core';
import { pgBossQueue } from '@hookline/pg-boss';
import { createDelivery, createSignedPayload, memoryQueue, requireServer } from '@hookline/testing';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DATABASE_URL, REDIS_URL } from '../support/servers';
import { type OpenedStore, reachable, STORE_KINDS, uniqueName } from './support/open-stores';

const SECRETS: Record<string, string> = { 'acme:wdl_x': 'whsec_tenant_acme_wdl_x', acme: 'whsec_tenant_acme' };
/** The two deliveries that once shared a key: [tenant, deliveryId]. */
const COLLIDING = [
  ['acme:wdl_x', 'wdl_e1'],
  ['acme', 'wdl_x:wdl_e1'],
] as const;

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
});

/** A per-tenant receiver behind node:http on 127.0.0.1, in a namespace of its own; `runs` lists what its handler ran. */
async function serve(options: Partial<ReceiverOptions>): Promise<{ url: string; runs: string[]; receiver: Receiver }> {
  const receiver = createReceiver({
    secret: ({ header }) => {
      const tenant = header('x-tenant') ?? '';
      return SECRETS[tenant] === undefined ? undefined : { tenant, secret: SECRETS[tenant] };
    },
    namespace: `${uniqueName('tenant_scopes')}:`,
    logger: false,
    ...options,
  } as ReceiverOptions);
  const runs: string[] = [];
  receiver.on('message.delivered', ({ deliveryId }) => {
    runs.push(deliveryId);
  });
  const server = http.createServer(createNodeHandler(receiver, { path: '/webhooks' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, runs, receiver };
}

/** Sends each colliding delivery, signed with its tenant's secret; resolves with the answers' status and body. */
async function sendBoth(url: string): Promise<{ status: number; body: unknown }[]> {
  const answers = [];
  for (const [tenant, deliveryId] of COLLIDING) {
    const { headers, body } = createSignedPayload(createDelivery('message.delivered', {}, { deliveryId }), SECRETS[tenant] as string, {
      headers: { 'x-tenant': tenant },
    });
    const response = await fetch(url, { method: 'POST', headers, body: body as string });
    answers.push({ status: response.status, body: await response.json() });
  }
  return answers;
}

describe('tenants whose tenant id and deliveryId spell one text, synchronous mode', () => {
  for (const kind of STORE_KINDS) {
    it(`are two deliveries on the ${kind.name} store: both answered 200 as new, both handlers run`, async () => {
      if (!(await reachable(kind))) return;
      const opened: OpenedStore = await kind.open();
      closers.push(opened.close);
      const { url, runs } = await serve({ store: opened.store });
      expect(await sendBoth(url)).toEqual([
        { status: 200, body: { ok: true } },
        { status: 200, body: { ok: true } },
      ]);
      expect(runs).toEqual(['wdl_e1', 'wdl_x:wdl_e1']);
      // and each is its own tenant's duplicate afterwards
      expect((await sendBoth(url)).map((answer) => answer.body)).toEqual([
        { ok: true, duplicate: true },
        { ok: true, duplicate: true },
      ]);
    });
  }
});

const redis = await requireServer('Redis', REDIS_URL);
const postgres = await requireServer('PostgreSQL', DATABASE_URL);

describe('tenants whose tenant id and deliveryId spell one text, answer-fast mode', () => {
  const queues: { name: string; available: boolean; open(): Promise<DeliveryQueue> }[] = [
    { name: 'the memory queue', available: true, open: async () => memoryQueue() },
    {
      name: 'BullMQ',
      available: redis.reachable,
      open: async () => {
        const { hostname, port } = new URL(REDIS_URL);
        const queue = bullmqQueue({
          connection: { host: hostname, port: Number(port || 6379), maxRetriesPerRequest: null },
          name: uniqueName('tenant-scopes'),
          worker: { drainDelay: 1 },
        });
        closers.push(async () => {
          await queue.queue.obliterate({ force: true });
          await queue.close();
        });
        return queue;
      },
    },
    {
      name: 'pg-boss',
      available: postgres.reachable,
      open: async () => {
        const schema = uniqueName('hookline_test');
        const queue = pgBossQueue({ connectionString: DATABASE_URL, bossOptions: { schema, supervise: false, schedule: false, max: 2 } });
        closers.push(async () => {
          const boss = await queue.boss();
          await queue.close();
          const pool = new (await import('pg')).default.Pool({ connectionString: DATABASE_URL, max: 1 });
          await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          await pool.end();
          return boss;
        });
        return queue;
      },
    },
  ];

  for (const { name, available, open } of queues) {
    it.skipIf(!available)(`are two jobs on ${name}: both answered 202 queued, both handlers run in the worker`, async () => {
      const queue = await open();
      const { url, runs, receiver } = await serve({ queue });
      expect(await sendBoth(url)).toEqual([
        { status: 202, body: { ok: true, queued: true } },
        { status: 202, body: { ok: true, queued: true } },
      ]);
      const worker = receiver.work();
      closers.push(() => worker.close());
      await vi.waitFor(() => expect([...runs].sort()).toEqual(['wdl_e1', 'wdl_x:wdl_e1']), { timeout: 15_000, interval: 20 });
      expect((await sendBoth(url)).map((answer) => answer.body)).toEqual([
        { ok: true, duplicate: true },
        { ok: true, duplicate: true },
      ]);
    });
  }
});

describe('a tenant named like the fingerprint an unnamed tenant gets', () => {
  it('is its own key space: its delivery runs, not answered as the unnamed one’s duplicate', async () => {
    const claimed: string[] = [];
    const { memoryStore } = await import('@hookline/core');
    const inner = memoryStore();
    const store = {
      ...inner,
      claim: (key: string, token: string, leaseMs: number) => {
        claimed.push(key);
        return inner.claim(key, token, leaseMs);
      },
    };
    const runs: string[] = [];
    const namespace = `${randomUUID()}:`;
    // The first request's resolver names no tenant: its scope comes from its secret. The second names
    // a tenant spelled as that scope, with another secret.
    let named: string | undefined;
    const receiver = createReceiver({
      namespace,
      store: store as never,
      logger: false,
      secret: () => (named === undefined ? 'whsec_unnamed' : { tenant: named, secret: 'whsec_named' }),
    });
    receiver.on('message.delivered', ({ deliveryId }) => {
      runs.push(deliveryId);
    });
    const send = (secret: string) => {
      const { headers, body } = createSignedPayload(createDelivery('message.delivered', {}, { deliveryId: 'wdl_e1' }), secret);
      return receiver.handle({ body: Buffer.from(body as string), headers });
    };
    expect((await send('whsec_unnamed')).status).toBe(200);
    const scope = (claimed[0] as string).slice(namespace.length, -'wdl_e1'.length);
    named = scope.slice(scope.indexOf(':') + 1, -1) || scope.slice(0, -1); // the fingerprint, with or without its tag
    const answer = await send('whsec_named');
    expect(JSON.parse(answer.body)).toEqual({ ok: true });
    expect(runs).toEqual(['wdl_e1', 'wdl_e1']);
  });
});
