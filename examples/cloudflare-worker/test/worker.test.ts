// The example Worker in workerd through miniflare, as `wrangler dev` runs it: bundled from
// src/worker.ts, the HOOKLINE_STORE binding as wrangler.toml declares it.
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SECRET = 'whsec_worker_example';
let mf: Miniflare;
const logged: string[] = [];

beforeAll(async () => {
  const bundle = await build({
    entryPoints: [new URL('../src/worker.ts', import.meta.url).pathname],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    conditions: ['@hookline/source', 'workerd', 'worker', 'browser'],
    logLevel: 'error',
  });
  const config = readFileSync(new URL('../wrangler.toml', import.meta.url), 'utf8');
  const compatibilityDate = /compatibility_date = "([^"]+)"/.exec(config)?.[1];
  mf = new Miniflare({
    modules: true,
    script: bundle.outputFiles[0]!.text,
    compatibilityDate,
    bindings: { WEBHOOK_SECRET: SECRET },
    durableObjects: { HOOKLINE_STORE: { className: 'HooklineStoreObject', useSQLite: true } },
    handleRuntimeStdio(stdout: NodeJS.ReadableStream) {
      stdout.on('data', (chunk: Buffer) => logged.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
    },
  });
  await mf.ready;
}, 60_000);
afterAll(() => mf?.dispose());

function signedDelivery() {
  const deliveryId = `wdl_${randomBytes(12).toString('hex')}`;
  const now = new Date().toISOString();
  const body = Buffer.from(
    `{"event":"message.delivered","deliveryId":"${deliveryId}","timestamp":"${now}",` +
      `"data":{"messageId":"msg_cf","from":"+12025550101","to":"+12025550143","lineId":"lin_cf","deliveredAt":"${now}","note":"ünï"}}`,
  );
  const headers = {
    'content-type': 'application/json',
    'x-service-signature': createHmac('sha256', SECRET).update(body).digest('hex'),
    'x-service-event': 'message.delivered',
    'x-service-delivery-id': deliveryId,
  };
  return { deliveryId, body: new Uint8Array(body), headers };
}

describe('examples/cloudflare-worker', () => {
  it('answers a signed delivery 200 and logs it once; a repeat is a duplicate; a tampered one is 401', async () => {
    const delivery = signedDelivery();
    const post = (body = delivery.body) =>
      mf.dispatchFetch('http://127.0.0.1:8787/webhooks', { method: 'POST', body, headers: delivery.headers });
    const first = await post();
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ ok: true });
    const again = await post();
    expect(await again.json()).toEqual({ ok: true, duplicate: true });
    const tampered = delivery.body.slice();
    tampered[tampered.length - 3] = tampered[tampered.length - 3]! ^ 1;
    expect((await post(tampered)).status).toBe(401);
    const get = await mf.dispatchFetch('http://127.0.0.1:8787/webhooks');
    expect(get.status).toBe(405);
    await get.arrayBuffer();
    // The log line reaches Node through workerd's stdout: wait for it.
    const line = JSON.stringify({ event: 'message.delivered', deliveryId: delivery.deliveryId });
    for (let tries = 0; tries < 50 && !logged.includes(line); tries++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(logged.filter((entry) => entry === line)).toHaveLength(1);
  });
});
