// The README's one-line recipes over `receiver.fetch`, each run through that framework's own request
// path: Elysia's fetch handler (`app.handle`, what `app.listen` serves on Bun), and React Router's
// data router for a resource route's action (`createStaticHandler().queryRoute()`, what its request
// handler runs for one). Bun.serve and Deno.serve run on the real runtimes in fetch-runtimes.test.ts.
// SvelteKit and Astro are not run here: each needs its Vite build first (the README says so).
import { createReceiver, type Delivery } from '@hookline/core';
import { Elysia } from 'elysia';
import { createStaticHandler } from 'react-router';
import { describe, expect, it } from 'vitest';
import { createSignedDelivery } from '../adapters/support/deliveries';
import { MATRIX_SECRET } from '../adapters/support/test-receiver';

function recordingReceiver() {
  const seen: Delivery<string, { note?: string }>[] = [];
  const receiver = createReceiver({ secret: MATRIX_SECRET, logger: false }).on('*', (delivery) => {
    seen.push(delivery as Delivery<string, { note?: string }>);
  });
  return { receiver, seen };
}

type Serve = (request: Request) => Promise<Response>;

const recipes: Record<string, (receiver: ReturnType<typeof recordingReceiver>['receiver']) => Serve> = {
  Elysia: (receiver) => {
    // The recipe: app.post('/webhooks', ({ request }) => receiver.fetch(request))
    const app = new Elysia().post('/webhooks', ({ request }) => receiver.fetch(request));
    return (request) => app.handle(request);
  },
  'React Router (resource route action)': (receiver) => {
    // The recipe, in app/routes/webhooks.ts: export const action = ({ request }) => receiver.fetch(request);
    const handler = createStaticHandler([{ id: 'webhooks', path: '/webhooks', action: ({ request }) => receiver.fetch(request) }]);
    return async (request) => (await handler.queryRoute(request)) as Response;
  },
};

describe.each(Object.entries(recipes))('%s over receiver.fetch', (_name, recipe) => {
  it('verifies the exact bytes (a BOM, odd whitespace), de-duplicates, and refuses a tampered body', async () => {
    const { receiver, seen } = recordingReceiver();
    const serve = recipe(receiver);
    const delivery = createSignedDelivery({ bom: true, controls: { note: 'Grüße 🎉' } });
    const send = (body: Uint8Array) =>
      serve(new Request('http://localhost/webhooks', { method: 'POST', body: new Uint8Array(body), headers: delivery.headers }));

    const first = await send(delivery.body);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ ok: true });
    expect(seen.map((d) => d.data.note)).toEqual(['Grüße 🎉']);

    const again = await send(delivery.body);
    expect(await again.json()).toEqual({ ok: true, duplicate: true });

    const tampered = Buffer.from(delivery.body.toString('utf8').replace('Grüße', 'Grüsse'));
    const refused = await send(tampered);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('INVALID_SIGNATURE');
    expect(seen).toHaveLength(1);
  });
});
