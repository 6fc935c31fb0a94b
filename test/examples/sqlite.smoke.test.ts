// examples/sqlite runs as a user starts it, and remembers across a restart: a delivery completed
// before the example stopped is a duplicate after it starts again on the same file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDelivery, createSignedPayload } from '@hookline/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { EXAMPLE_SECRET, type RunningExample, startExample } from './support/run-example';

const dir = mkdtempSync(join(tmpdir(), 'hookline-example-sqlite-'));

async function send(url: string, payload: { headers: Record<string, string>; body: string | Uint8Array }) {
  const body = typeof payload.body === 'string' ? payload.body : new Uint8Array(payload.body);
  const response = await fetch(url, { method: 'POST', headers: payload.headers, body });
  return { status: response.status, body: (await response.json()) as unknown };
}

describe('examples/sqlite', () => {
  let example: RunningExample | undefined;
  afterAll(async () => {
    await example?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('handles a delivery once, and still knows it after a restart on the same file', async () => {
    const env = { HOOKLINE_DB: join(dir, 'hookline.db') };
    const payload = createSignedPayload(createDelivery('message.delivered'), EXAMPLE_SECRET);
    const id = payload.headers['x-service-delivery-id']!;

    example = await startExample('sqlite', { env });
    expect(await send(example.url, payload)).toEqual({ status: 200, body: { ok: true } });
    expect(await example.lineFor(id)).toEqual({ event: 'message.delivered', deliveryId: id });
    expect(await send(example.url, payload)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    await example.stop();

    example = await startExample('sqlite', { env });
    expect(await send(example.url, payload)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    // A fresh delivery runs, and the first one never ran in the restarted process.
    const fresh = createSignedPayload(createDelivery('message.read'), EXAMPLE_SECRET);
    expect((await send(example.url, fresh)).status).toBe(200);
    await example.lineFor(fresh.headers['x-service-delivery-id']!);
    expect(example.lines().filter((line) => line.deliveryId === id)).toEqual([]);
  }, 120_000);
});
