// examples/cloudflare-queue as a user starts it (`pnpm start`: both Workers in workerd through
// miniflare): a signed delivery is answered 202 queued before its slow handler ran in the consumer
// Worker, which runs it once; a repeat is a duplicate; the dead-letter routes answer behind their token;
// and the wrangler configurations declare what the local run wires up.
import { readFileSync } from 'node:fs';
import { createDelivery, createSignedPayload } from '@hookline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectQueuedThenHandledOnce, post } from './support/answer-fast';
import { EXAMPLE_SECRET, type RunningExample, startExample } from './support/run-example';

const ADMIN_TOKEN = 'admin-token-for-the-smoke-test';
const example = (file: string) => readFileSync(new URL(`../../examples/cloudflare-queue/${file}`, import.meta.url), 'utf8');

describe('examples/cloudflare-queue', () => {
  let running: RunningExample;
  let admin: string;
  beforeAll(async () => {
    running = await startExample('cloudflare-queue', { env: { HANDLER_MS: '1500', ADMIN_TOKEN } });
    admin = running.url.replace(/\/webhooks$/, '/dead-letters');
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
  });

  it('answers 202 queued before the handler ran, runs it once in the consumer Worker, and answers a repeat as a duplicate', async () => {
    await expectQueuedThenHandledOnce(running);
  }, 30_000);

  it('refuses a tampered delivery with 401', async () => {
    const payload = createSignedPayload(createDelivery('message.delivered'), EXAMPLE_SECRET);
    const tampered = { ...payload, body: `${String(payload.body).slice(0, -1)} }` };
    expect((await post(running.url, tampered)).status).toBe(401);
  });

  it('serves the dead-letter routes only with the admin token, and refuses a replay it cannot read', async () => {
    const withToken = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const refused = await fetch(admin);
    expect({ status: refused.status, body: await refused.json() }).toEqual({
      status: 401,
      body: { error: { code: 'UNAUTHORIZED', message: 'Send Authorization: Bearer <ADMIN_TOKEN>.' } },
    });
    const listed = await fetch(admin, { headers: withToken });
    expect({ status: listed.status, body: await listed.json() }).toEqual({ status: 200, body: [] });
    const replay = (body: string) => fetch(`${admin}/replay`, { method: 'POST', headers: withToken, body });
    const unknown = await replay(JSON.stringify({ deliveryId: 'wdl_not_dead' }));
    expect(await unknown.json()).toEqual({ replayed: false });
    const bad = await replay('{"deliveryId":7}');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
  });

  it('declares in wrangler.toml and wrangler.consumer.toml the queue, bindings and retries the local run wires up', () => {
    const accept = example('wrangler.toml');
    const consumer = example('wrangler.consumer.toml');
    const local = example('src/local.ts');
    const receiver = example('src/receiver.ts');
    expect(accept).toMatch(/binding = "DELIVERIES"\nqueue = "hookline-deliveries"/);
    expect(consumer).toMatch(/binding = "DELIVERIES"\nqueue = "hookline-deliveries"/);
    expect(consumer).toMatch(/script_name = "hookline-webhooks"/);
    expect(consumer).toMatch(/max_retries = 3 /);
    expect(consumer).toMatch(/dead_letter_queue = "hookline-deliveries-dlq"/);
    expect(consumer).toMatch(/\[\[queues\.consumers\]\]\nqueue = "hookline-deliveries-dlq"/);
    expect(local).toMatch(/maxRetries: 3, deadLetterQueue: `\$\{queue\}-dlq`/);
    expect(receiver).toMatch(/DEAD_LETTER_QUEUE = 'hookline-deliveries-dlq'/);
  });
});
