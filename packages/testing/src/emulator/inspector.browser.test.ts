import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deadPort } from '../receiver.test-support';
import { sign } from '../sign';
import { startServiceEmulator, type ServiceEmulator } from './start-service-emulator';

// The inspector page in a real browser: the system Chromium (Debian's `chromium` package; CI installs
// it), driven by playwright-core, which cannot download browsers here and does not need to. The page
// is looked at as a user would: after a trigger, after a failing and then a successful attempt, a
// replay, a resend, a delivery that met no listener, and payloads and answers full of markup. A
// screenshot of the last state is written to test-output/inspector.png at the repository's root.
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

const OUTPUT = fileURLToPath(new URL('../../../../test-output/', import.meta.url));
const MARKUP = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

let emulator: ServiceEmulator;
let servers: Server[] = [];
let browser: Browser;
let secret = '';

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

async function createWebhook(url: string, events: string[]): Promise<string> {
  const created = await fetch(`${emulator.url}/v1/webhooks`, {
    method: 'POST',
    headers: { 'x-api-key': emulator.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ url, events }),
  });
  const body = await created.json();
  return body.signingSecret;
}

beforeAll(async () => {
  if (executablePath === undefined) return;
  emulator = await startServiceEmulator({ timeScale: 0.001 }); // the first retry 30 ms after a failure
  // A hookline receiver whose handler fails every delivery's first attempt: a failed, then a successful attempt.
  const receiver = createReceiver({ secret: () => secret, logger: false });
  receiver.onError(() => {});
  receiver.on('message.delivered', (_delivery, { attempt }) => {
    if (attempt === 1) throw new Error('the first attempt fails');
  });
  secret = await createWebhook(await listen(createServer(createNodeHandler(receiver, { path: '/webhooks' }))), ['message.delivered']);
  // An endpoint that answers with an HTML page full of markup, and one where nothing listens.
  const html = createServer((req, res) => {
    req.resume();
    res.writeHead(500, { 'content-type': 'text/html', 'x-trace': 'html-endpoint' }).end(`<h1>Oops</h1>${MARKUP}`);
  });
  await createWebhook(await listen(html), ['message.failed']);
  await createWebhook(`http://127.0.0.1:${await deadPort()}/webhooks`, ['call.completed']);
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
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  servers = [];
});

const card = (page: Page, deliveryId: string) => page.locator(`.delivery[data-delivery-id="${deliveryId}"]`);
const cells = (rows: Locator, selector: string) => rows.locator(selector).allTextContents();

it.skipIf(executablePath === undefined)(
  'shows each delivery: payload, headers, raw bytes, every answer; replays, resends, filters; no markup runs',
  async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const failedRequests: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failedRequests.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(emulator.inspectorUrl);
    await expect.poll(() => page.locator('#live').textContent(), { timeout: 15_000 }).toContain('live');
    await expect.poll(() => page.locator('#webhooks tbody tr').count(), { timeout: 15_000 }).toBe(3);

    // A trigger from the page: attempt 1 fails (500), the retry 30 ms later succeeds. The page follows by itself.
    await page.selectOption('#trigger-event', 'message.delivered');
    await page.click('#trigger-button');
    await expect.poll(() => emulator.deliveries().length, { timeout: 15_000 }).toBe(1);
    const delivered = emulator.deliveries()[0]!;
    const first = card(page, delivered.deliveryId);
    const rows = first.locator('tr.attempt');
    await expect.poll(() => cells(rows, '.status'), { timeout: 15_000 }).toEqual(['failed', 'succeeded']);
    expect(await cells(rows, '.code')).toEqual(['500', '200']);
    expect(await first.locator('.delivery-status').textContent()).toBe('succeeded');
    expect(await rows.nth(0).textContent()).toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/); // UTC, as the CLI prints times

    // What was sent: the headers, the payload pretty-printed, and on demand the exact bytes, which the signature covers.
    await first.locator('details[data-key$=":request"] > summary').click();
    const headerRows = await first.locator('details[data-key$=":request"] table.headers tr').all();
    const headers = Object.fromEntries(await Promise.all(headerRows.map((row) => row.locator('td').allTextContents())));
    expect(headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-event': 'message.delivered',
      'x-service-delivery-id': delivered.deliveryId,
      'x-service-signature': expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const payload = (await first.locator('pre.payload').textContent())!;
    expect(payload).toContain('\n  "event": "message.delivered",\n');
    expect(JSON.parse(payload)).toEqual(delivered.payload);
    await first.locator('button.show-raw').click();
    await expect.poll(() => first.locator('pre.raw').isVisible()).toBe(true);
    const raw = (await first.locator('pre.raw').textContent())!;
    expect(JSON.parse(raw)).toEqual(delivered.payload);
    expect(raw).not.toContain('\n');
    expect(sign(raw, secret)).toBe(headers['x-service-signature']);

    // Each attempt's answer in full: its headers and body.
    await first.locator('details[data-key$=":answer:1"] > summary').click();
    const answer1 = first.locator('details[data-key$=":answer:1"]');
    expect(await answer1.locator('table.headers').textContent()).toContain('content-type');
    expect(JSON.parse((await answer1.locator('pre.answer-body').textContent())!)).toMatchObject({ error: { code: 'INTERNAL_ERROR' } });

    // Replay: the same delivery again, answered as a duplicate. What was opened stays open through the re-draws.
    await first.locator('button.replay').click();
    await expect.poll(() => cells(rows, '.trigger'), { timeout: 15_000 }).toEqual(['schedule', 'schedule', 'replay']);
    expect(await rows.nth(2).locator('.answer').textContent()).toBe('{"ok":true,"duplicate":true}');
    expect(await first.locator('details[data-key$=":request"]').getAttribute('open')).not.toBeNull();
    expect(await first.locator('pre.raw').isVisible()).toBe(true);

    // Resend: the same event and data as a new delivery, whose handler runs again (and fails its first attempt again).
    await first.locator('button.resend').click();
    await expect.poll(() => emulator.deliveries().length, { timeout: 15_000 }).toBe(2);
    const resent = emulator.deliveries()[0]!;
    expect(resent.deliveryId).not.toBe(delivered.deliveryId);
    expect((resent.payload as { data: unknown }).data).toEqual((delivered.payload as { data: unknown }).data);
    await expect
      .poll(() => cells(card(page, resent.deliveryId).locator('tr.attempt'), '.status'), { timeout: 15_000 })
      .toEqual(['failed', 'succeeded']);

    // Markup in a payload and in an answer is shown as text and never runs.
    const [marked] = await emulator.emit('message.failed', { reason: MARKUP });
    // Nothing listens for call.completed: the page says why the attempt got no answer.
    const [refused] = await emulator.emit('call.completed');
    const markedCard = card(page, marked!.deliveryId);
    await expect.poll(() => markedCard.locator('tr.attempt').count(), { timeout: 15_000 }).toBeGreaterThan(0);
    await markedCard.locator('details[data-key$=":request"] > summary').click();
    expect(await markedCard.locator('pre.payload').textContent()).toContain(MARKUP.replaceAll('"', '\\"'));
    await markedCard.locator('details[data-key$=":answer:1"] > summary').click();
    expect(await markedCard.locator('details[data-key$=":answer:1"] pre.answer-body').textContent()).toBe(`<h1>Oops</h1>${MARKUP}`);
    expect(await markedCard.locator('details[data-key$=":answer:1"] table.headers').textContent()).toContain('html-endpoint');
    expect(await page.locator('#deliveries img, #deliveries script, #deliveries h1').count()).toBe(0);
    expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();

    const refusedRow = card(page, refused!.deliveryId).locator('tr.attempt').first();
    await expect.poll(() => refusedRow.locator('.code').textContent(), { timeout: 15_000 }).toBe('ECONNREFUSED');
    expect(await refusedRow.locator('.status').textContent()).toBe('network-error');
    expect(await refusedRow.locator('.answer').textContent()).toMatch(
      /^connect ECONNREFUSED 127\.0\.0\.1:\d+ \(nothing is listening there/,
    );

    // Filters: by status (failed: retrying or given up), then by event too; kept in the address.
    await page.selectOption('#filter-status', 'failed');
    await expect
      .poll(async () => (await page.locator('.delivery .delivery-id').allTextContents()).sort(), { timeout: 15_000 })
      .toEqual([marked!.deliveryId, refused!.deliveryId].sort());
    await page.selectOption('#filter-event', 'call.completed');
    await expect.poll(() => page.locator('.delivery .delivery-id').allTextContents(), { timeout: 15_000 }).toEqual([refused!.deliveryId]);
    expect(await page.locator('#shown').textContent()).toBe('1 of 4 deliveries match');
    expect(new URL(page.url()).search).toBe('?event=call.completed&status=failed');
    await page.reload();
    await expect.poll(() => page.locator('.delivery .delivery-id').allTextContents(), { timeout: 15_000 }).toEqual([refused!.deliveryId]);
    expect(await page.locator('#filter-status').inputValue()).toBe('failed');

    await page.goto(emulator.inspectorUrl);
    await expect.poll(() => page.locator('.delivery').count(), { timeout: 15_000 }).toBe(4);
    await card(page, delivered.deliveryId).locator('details[data-key$=":request"] > summary').click();
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: `${OUTPUT}inspector.png`, fullPage: true });
    expect(failedRequests).toEqual([]); // no favicon 404, nothing else refused
  },
  60_000,
);
