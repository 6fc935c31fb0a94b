// express.raw() in front of the webhook route: its defaults mislead (a 100 kB limit answers a valid
// 200 kB delivery with Express's HTML 413, and it inflates gzip bodies so the signature is checked over
// other bytes than the ones sent). The line hookline recommends, in its messages and READMEs, keeps the
// contract: every delivery within maxBodyBytes passes, an encoded body is verified over the bytes as
// sent, exactly as when hookline streams the body itself.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { createReceiver } from '@hookline/core';
import { webhookHandler } from '@hookline/express';
import express4 from 'express4';
import express5 from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { createSignedDelivery, signBytes } from './support/deliveries';
import { MATRIX_SECRET } from './support/test-receiver';
import { listenOnLoopback } from '../support/loopback';

/** The recommended options, as the fix messages and the READMEs spell them. */
const RECOMMENDED = "express.raw({ type: (req) => !req.headers['content-encoding'], limit: receiver.maxBodyBytes, inflate: false })";

const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(
    servers.map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

async function listen(app: (req: IncomingMessage, res: import('node:http').ServerResponse) => void): Promise<string> {
  const server = createServer(app);
  servers.push(server);
  return (await listenOnLoopback(server)).base;
}

/** A delivery padded to about `bytes` (in data.note), signed. */
function deliveryOf(bytes: number) {
  return createSignedDelivery({ controls: { note: 'x'.repeat(bytes) } });
}

describe.each([
  ['Express 4', express4],
  ['Express 5', express5],
] as const)('%s: express.raw() in front of the route', (_name, express) => {
  /** Three routes on one app: hookline streaming the body, the recommended raw parser, the bare one. */
  async function start() {
    const handled: string[] = [];
    // The default maxBodyBytes (1 MiB): a 200 kB delivery is well within it.
    const receiver = createReceiver({ secret: MATRIX_SECRET, logger: false });
    receiver.on('*', ({ deliveryId }) => void handled.push(deliveryId));
    const app = express();
    app.all('/streamed', webhookHandler(receiver));
    app.all(
      '/recommended',
      express.raw({ type: (req) => !req.headers['content-encoding'], limit: receiver.maxBodyBytes, inflate: false }),
      webhookHandler(receiver),
    );
    app.all('/bare', express.raw({ type: '*/*' }), webhookHandler(receiver));
    return { base: await listen(app), handled };
  }

  it('the recommended line passes a 200 kB delivery (the bare one answers it with its own HTML 413)', async () => {
    const { base, handled } = await start();
    const delivery = deliveryOf(200 * 1024);
    const recommended = await fetch(`${base}/recommended`, {
      method: 'POST',
      headers: delivery.headers,
      body: new Uint8Array(delivery.body),
    });
    expect(recommended.status).toBe(200);
    expect(await recommended.json()).toEqual({ ok: true });
    expect(handled).toEqual([delivery.deliveryId]);

    const other = deliveryOf(200 * 1024);
    const bare = await fetch(`${base}/bare`, { method: 'POST', headers: other.headers, body: new Uint8Array(other.body) });
    expect(bare.status).toBe(413);
    expect(bare.headers.get('content-type')).toMatch(/html/);
  });

  it.each([
    ['signed over the inflated JSON', (json: Buffer, _gzip: Buffer) => signBytes(json)],
    ['signed over the gzip bytes sent', (_json: Buffer, gzip: Buffer) => signBytes(gzip)],
  ] as const)(
    'a gzip-encoded body %s: verified over the bytes as sent, the same answer as when hookline streams it',
    async (_, signature) => {
      const { base, handled } = await start();
      const delivery = createSignedDelivery();
      const gzip = gzipSync(delivery.body);
      const headers = { ...delivery.headers, 'content-encoding': 'gzip', 'x-service-signature': signature(delivery.body, gzip) };
      const send = async (route: string) => {
        const response = await fetch(`${base}/${route}`, { method: 'POST', headers, body: new Uint8Array(gzip) });
        return { status: response.status, body: await response.text() };
      };
      const streamed = await send('streamed');
      const recommended = await send('recommended');
      expect(streamed.status).toBeGreaterThanOrEqual(400); // never delivered: the bytes sent are gzip
      expect(recommended).toEqual(streamed);
      expect(handled).toEqual([]);
      // What the bare parser does instead: it inflates, and verifies other bytes than the ones sent.
      const bare = await send('bare');
      expect(bare.status === streamed.status && bare.body === streamed.body).toBe(false);
    },
  );

  it('the configuration error and the README name the recommended line', async () => {
    const receiver = createReceiver({ secret: MATRIX_SECRET, logger: false });
    const app = express();
    app.use(express.json());
    app.all('/webhooks', webhookHandler(receiver));
    const base = await listen(app);
    const delivery = createSignedDelivery();
    const response = await fetch(`${base}/webhooks`, { method: 'POST', headers: delivery.headers, body: new Uint8Array(delivery.body) });
    expect(response.status).toBe(500);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('CONFIGURATION_ERROR');
    expect(error.message).toContain(RECOMMENDED);
    const readme = readFileSync(new URL('../../packages/express/README.md', import.meta.url), 'utf8');
    expect(readme).toContain(RECOMMENDED);
  });
});
