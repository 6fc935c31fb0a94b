// The Durable Object store in workerd, through miniflare (both from npm): the conformance suite calls
// the store's methods inside a test Worker, and a receiver in that Worker serves signed deliveries.
import { createHmac, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { IdempotencyStore } from '@hookline/core';
import { StoreDataError, StoreNotSetUpError } from '@hookline/core/adapter';
import { describeStoreConformance } from '@hookline/testing/conformance';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, describe, expect, it } from 'vitest';

const SECRET = 'whsec_cloudflare_test';

const bundle = await build({
  entryPoints: [new URL('./worker.test-support.ts', import.meta.url).pathname],
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  conditions: ['@hookline/source'],
  logLevel: 'error',
});

// In-memory Durable Object storage: nothing is left on disk.
const mf = new Miniflare({
  modules: true,
  script: bundle.outputFiles[0]!.text,
  compatibilityDate: '2024-09-23',
  bindings: { WEBHOOK_SECRET: SECRET },
  durableObjects: {
    HOOKLINE_STORE: { className: 'InspectableStoreObject', useSQLite: true }, // SQLite-backed, as new classes are
    BROKEN_STORE: 'BrokenObject',
    OTHER_OBJECT: 'OtherObject',
    NO_FETCH_OBJECT: 'NoFetchObject',
  },
  // workerd's own lines, passed on but for the one a test provokes on purpose (the binding to a class
  // without fetch()), which would otherwise be printed in every run of the suite.
  handleRuntimeStdio(stdout: Readable, stderr: Readable) {
    stdout.pipe(process.stdout);
    stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      const kept = text
        .split('\n')
        .filter((line) => !line.includes('Received a FetchEvent but we lack a handler for FetchEvents'))
        .join('\n');
      if (kept.trim() !== '') process.stderr.write(kept);
    });
  },
});
await mf.ready;
afterAll(() => mf.dispose());

/** A number JSON cannot carry, as the test Worker reads it back (`{ nonFinite: 'NaN' }`). */
const nonFinite = (value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? { nonFinite: String(value) } : undefined);

/** The store as the Worker sees it, each method one request to the test Worker. */
function storeInWorker(state: { broken: boolean; binding?: string }): IdempotencyStore {
  const call = async (op: string, key: string, token: string, ms?: number, version?: number) => {
    const response = await mf.dispatchFetch(`http://worker.test/store/${op}`, {
      method: 'POST',
      // NaN and ±Infinity would arrive as null: sent as text, so the store in the Worker sees them as they are.
      body: JSON.stringify({ key, token, ms, version: nonFinite(version) ?? version, broken: state.broken, binding: state.binding }),
    });
    const answer = (await response.json()) as { result?: unknown; error?: string; dataError?: boolean; notSetUp?: boolean };
    if (answer.error !== undefined) {
      if (answer.dataError) throw new StoreDataError(answer.error);
      throw answer.notSetUp ? new StoreNotSetUpError(answer.error) : new Error(answer.error);
    }
    return answer.result;
  };
  return {
    claim: (key, token, leaseMs) => call('claim', key, token, leaseMs) as never,
    complete: (key, token, retentionMs) => call('complete', key, token, retentionMs) as never,
    release: (key, token) => call('release', key, token) as never,
    extend: (key, token, leaseMs) => call('extend', key, token, leaseMs) as never,
    readVersion: async (key) => ((await call('readVersion', key, '')) as number | null) ?? undefined,
    advanceVersion: (key, version, retentionMs) => call('advanceVersion', key, '', retentionMs, version) as never,
  };
}

describe('durableObjectStore in workerd', () => {
  describeStoreConformance(
    'durableObjectStore',
    () => {
      const state = { broken: false };
      return {
        store: storeInWorker(state),
        breakBackend: () => {
          state.broken = true;
        },
      };
    },
    // Another class bound in the store's place.
    { rounds: 10, versions: true, notSetUp: () => ({ store: storeInWorker({ broken: false, binding: 'OTHER_OBJECT' }) }) },
  );

  function signedDelivery(note: string) {
    const deliveryId = `wdl_${randomBytes(12).toString('hex')}`;
    const now = new Date().toISOString();
    const body = Buffer.from(
      `{"deliveryId":"${deliveryId}","event":"message.delivered","timestamp":"${now}","data":{"messageId":"msg_cf","from":"+12025550101",` +
        `"to":"+12025550143","lineId":"lin_cf","deliveredAt":"${now}","note":${JSON.stringify(note)}}}`,
    );
    const headers = {
      'content-type': 'application/json',
      'x-service-signature': createHmac('sha256', SECRET).update(body).digest('hex'),
      'x-service-event': 'message.delivered',
      'x-service-delivery-id': deliveryId,
    };
    return { deliveryId, body: new Uint8Array(body), headers };
  }

  it('serves a signed delivery in the Worker once, and its repeats (concurrent ones too) as duplicates', async () => {
    const delivery = signedDelivery('Grüße 🎉');
    const post = (body = delivery.body) =>
      mf.dispatchFetch('http://worker.test/webhooks', { method: 'POST', body, headers: delivery.headers });
    const first = await post();
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ ok: true });
    const again = await post();
    expect(await again.json()).toEqual({ ok: true, duplicate: true });
    const burst = await Promise.all(Array.from({ length: 8 }, () => post().then((r) => r.json())));
    expect(burst).toEqual(Array.from({ length: 8 }, () => ({ ok: true, duplicate: true })));

    const tampered = delivery.body.slice();
    tampered[20] = tampered[20]! ^ 1;
    expect((await post(tampered)).status).toBe(401);

    const runs = (await (await mf.dispatchFetch('http://worker.test/runs')).json()) as { deliveryId: string }[];
    expect(runs.filter((run) => run.deliveryId === delivery.deliveryId)).toEqual([{ deliveryId: delivery.deliveryId, note: 'Grüße 🎉' }]);
  });

  it('runs a delivery sent concurrently exactly once (one attempt wins, the others get 409 or a duplicate)', async () => {
    const delivery = signedDelivery('race');
    const answers = await Promise.all(
      Array.from({ length: 16 }, () =>
        mf.dispatchFetch('http://worker.test/webhooks', { method: 'POST', body: delivery.body, headers: delivery.headers }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    await Promise.all(answers.map((answer) => answer.arrayBuffer()));
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    const runs = (await (await mf.dispatchFetch('http://worker.test/runs')).json()) as { deliveryId: string }[];
    expect(runs.filter((run) => run.deliveryId === delivery.deliveryId)).toHaveLength(1);
  });

  it('answers 500 CONFIGURATION_ERROR store_not_set_up, saying how to bind it, when the binding is missing or holds another class', async () => {
    for (const [binding, why] of [
      ['MISSING', /`client` is undefined, not a Durable Object namespace/],
      ['OTHER_OBJECT', /is not HooklineStoreObject \(it answered 404/],
      ['NO_FETCH_OBJECT', /is not HooklineStoreObject/],
    ] as const) {
      const delivery = signedDelivery('misbound');
      const answer = await mf.dispatchFetch(`http://worker.test/misbound/${binding}`, {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
      });
      const { error } = (await answer.json()) as { error: { code: string; message: string; details: unknown } };
      expect([binding, answer.status, error.code, error.details]).toEqual([
        binding,
        500,
        'CONFIGURATION_ERROR',
        { reason: 'store_not_set_up' },
      ]);
      expect(error.message).toMatch(why);
      expect(error.message).toContain("export { HooklineStoreObject } from '@hookline/cloudflare'");
    }
  });

  it('has the object refuse a version that is not a finite number as data (422), recording nothing', async () => {
    const key = `hookline:order:h:lin_${randomBytes(6).toString('hex')}:version`;
    const send = async (version: unknown) => {
      const response = await mf.dispatchFetch('http://worker.test/object', {
        method: 'POST',
        body: JSON.stringify({ op: 'advanceVersion', key, token: '', ms: 60_000, version }),
      });
      return { status: response.status, body: await response.json() };
    };
    // What JSON makes of NaN and ±Infinity (null), a string, and no version at all.
    for (const version of [null, '8', undefined]) {
      const answer = await send(version);
      expect(answer.status, String(version)).toBe(422);
      expect(String((answer.body as { error?: unknown }).error)).toMatch(/a version must be a finite number/);
    }
    expect(await send(3)).toEqual({ status: 200, body: true });
    expect(await send(null)).toMatchObject({ status: 422 });
    expect(await send(2)).toEqual({ status: 200, body: false });
  });

  it('deletes records with the alarm once their retention has passed', async () => {
    const store = storeInWorker({ broken: false });
    const key = `hookline:wdl_${randomBytes(12).toString('hex')}`;
    const inspect = async () =>
      (await (await mf.dispatchFetch('http://worker.test/inspect', { method: 'POST', body: JSON.stringify({ key }) })).json()) as string[];
    expect((await store.claim(key, 'owner', 60_000)).state).toBe('acquired');
    expect(await store.complete(key, 'owner', 300)).toBe(true);
    // The record and its purge index entry (the claim's entry was replaced by the completion's).
    expect((await inspect()).length).toBe(2);
    expect(await store.claim(key, 'other', 60_000)).toEqual({ state: 'completed' });
    for (let tries = 0; tries < 50 && (await inspect()).length > 0; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await inspect()).toEqual([]);
    expect((await store.claim(key, 'other', 60_000)).state).toBe('acquired');
  });
});
