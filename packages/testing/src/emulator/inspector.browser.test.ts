import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServiceEmulator, type ServiceEmulator } from './start-service-emulator';

// The inspector page in a real browser: the system Chromium (Debian's `chromium` package; CI installs
// it), driven by playwright-core, which cannot download browsers here and does not need to.
function systemChromium(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const executablePath = systemChromium();
if (executablePath === undefined) {
  const reason = 'no chromium on PATH (install it with: apt-get install -y chromium)';
  if (process.env.CI) throw new Error(`inspector browser test: ${reason}; CI must run it`);
  console.warn(`skipping the inspector browser test: ${reason}`);
}

let emulator: ServiceEmulator;
let server: Server;
let browser: Browser;
let secret = '';

beforeAll(async () => {
  if (executablePath === undefined) return;
  emulator = await startServiceEmulator();
  const receiver = createReceiver({ secret: () => secret });
  receiver.on('message.delivered', () => {});
  server = createServer(createNodeHandler(receiver, { path: '/webhooks' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const created = await fetch(`${emulator.url}/v1/webhooks`, {
    method: 'POST',
    headers: { 'x-api-key': emulator.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, events: ['message.delivered'] }),
  });
  secret = (await created.json()).signingSecret;
  browser = await chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await emulator?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
});

it.skipIf(executablePath === undefined)('triggers an event, shows its attempt, replays it and shows the duplicate answer', async () => {
  const page = await browser.newPage();
  const failedRequests: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) failedRequests.push(`${response.status()} ${response.url()}`);
  });
  await page.goto(emulator.inspectorUrl);
  await expect.poll(() => page.locator('#live').textContent(), { timeout: 15_000 }).toContain('live');
  await expect.poll(() => page.locator('#webhooks tbody tr').count(), { timeout: 15_000 }).toBe(1);
  expect(await page.locator('#webhooks tbody tr').textContent()).toContain('message.delivered');

  await page.selectOption('#trigger-event', 'message.delivered');
  await page.click('#trigger-button');
  const card = page.locator('.delivery').first();
  const rows = card.locator('tr.attempt');
  // The page refreshes on its own (server-sent events): no reload here.
  await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(1);
  expect(await rows.nth(0).locator('.status').textContent()).toBe('succeeded');
  expect(await rows.nth(0).locator('.code').textContent()).toBe('200');
  expect(await rows.nth(0).locator('.latency').textContent()).toMatch(/^\d+\.\d ms$/);
  // Times as the CLI prints them: a date and a zone (UTC), not the browser's local clock time alone.
  expect(await rows.nth(0).textContent()).toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/);
  const deliveryId = await card.locator('.delivery-id').textContent();
  expect(deliveryId).toBe(emulator.deliveries()[0]!.deliveryId);

  await card.locator('button.replay').click();
  await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);
  expect(await rows.nth(1).locator('.answer').textContent()).toBe('{"ok":true,"duplicate":true}');
  expect(await rows.nth(1).textContent()).toContain('replay');
  expect(failedRequests).toEqual([]); // no favicon 404, nothing else refused
});
