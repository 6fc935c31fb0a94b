import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHandler, createReceiver, EVENT_CATALOGUE } from '@hookline/core';
import { createDelivery, FIXTURE_SECRET, RAW_FIXTURES, serializeDelivery, sign } from '@hookline/testing';
import { runHookline } from './hookline-process.test-support';

// The CLI runs as a real process (from source, through tsx) against a real receiver over HTTP.
const secret = 'whsec_cli_test';
const hookline = runHookline;

let server: Server;
let url: string;

beforeAll(async () => {
  // The wrong-secret and failing deliveries are on purpose: no refusal notes.
  const receiver = createReceiver({ secret, logger: false });
  receiver.onError(() => {});
  receiver.on('message.delivered', () => {});
  receiver.on('call.completed', (_delivery, context) => {
    if (context.attempt === 1) throw new Error('fails on the first attempt only');
  });
  receiver.on('line.ban_detected', () => {
    throw new Error('always fails');
  });
  server = createServer(createNodeHandler(receiver, { path: '/webhooks' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('hookline send', () => {
  it('sends one signed delivery and prints status, latency and the answer', async () => {
    const run = await hookline(['send', 'message.delivered', '--url', url, '--secret', secret]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/x-service-delivery-id {2}wdl_[0-9a-z]{24}/);
    expect(run.stdout).toMatch(/200 succeeded in \d+\.\d ms/);
    expect(run.stdout).toContain('"ok": true');
  });

  it('reuses --delivery-id (a duplicate), reads --data @file and takes the secret from HOOKLINE_SECRET', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookline-cli-'));
    const dataFile = join(dir, 'data.json');
    await writeFile(dataFile, '{"to":"+33612345678"}');
    const args = ['send', 'message.delivered', '--url', url, '--data', `@${dataFile}`, '--delivery-id', 'wdl_cli_duplicate_test', '--json'];
    const first = await hookline(args, { env: { HOOKLINE_SECRET: secret } });
    const second = await hookline(args, { env: { HOOKLINE_SECRET: secret } });
    expect(first.code).toBe(0);
    const firstOut = JSON.parse(first.stdout);
    expect(firstOut.delivery).toMatchObject({ deliveryId: 'wdl_cli_duplicate_test', data: { to: '+33612345678' } });
    expect(JSON.parse(firstOut.attempt.responseBody)).toEqual({ ok: true });
    expect(JSON.parse(JSON.parse(second.stdout).attempt.responseBody)).toEqual({ ok: true, duplicate: true });
  });

  it('exits 1 when the receiver refuses (wrong secret: 401) and 2 on a usage error', async () => {
    const [refused, unknownOption] = await Promise.all([
      hookline(['send', 'message.read', '--url', url, '--secret', 'whsec_wrong']),
      hookline(['send', 'message.read', '--url', url, '--secret', secret, '--bogus']),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('401 failed');
    expect(refused.stdout).toContain('INVALID_SIGNATURE');
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toBe('hookline send: unknown option --bogus\nRun "hookline send --help" for its usage.\n');
  });
});

describe('hookline simulate', () => {
  const args = () => [
    'simulate',
    '--url',
    url,
    '--secret',
    secret,
    '--events',
    'message.delivered,call.completed,line.ban_detected',
    '--time-scale',
    '0.00001',
    '--timeout',
    '10000',
  ];

  it('walks the whole retry schedule and reports first time / after retries / gave up (--json)', async () => {
    const run = await hookline([...args(), '--json']);
    expect(run.code).toBe(1); // one delivery was given up
    const out = JSON.parse(run.stdout);
    expect(out.summary).toEqual({ deliveries: 3, attempts: 10, firstTime: 1, afterRetries: 1, gaveUp: 1 });
    const gaveUp = out.deliveries.find((d: { event: string }) => d.event === 'line.ban_detected');
    expect(gaveUp.outcome).toBe('gave-up');
    expect(gaveUp.attempts.map((a: { responseCode: number }) => a.responseCode)).toEqual([500, 500, 500, 500, 500, 500, 500]);
    expect(gaveUp.attempts.map((a: { scheduleOffsetMs: number }) => a.scheduleOffsetMs)).toEqual([
      0, 30_000, 150_000, 750_000, 4_350_000, 25_950_000, 112_350_000,
    ]);
    expect(new Set(gaveUp.attempts.map((a: { deliveryId: string }) => a.deliveryId)).size).toBe(1);
    expect(run.stderr).toBe('');
  });

  it('prints plain progress lines when not on a terminal, then the attempt table and the summary', async () => {
    const run = await hookline(args());
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^attempt 1 message\.delivered wdl_\w+ → succeeded 200/m);
    expect(run.stderr).toMatch(/^attempt 7 line\.ban_detected wdl_\w+ → failed 500/m);
    expect(run.stdout).toMatch(/^delivery\s+event\s+try\s+schedule\s+status\s+code\s+latency\s+answer$/m);
    expect(run.stdout).toContain('+1 d 7 h 12 m 30 s');
    expect(run.stdout).toContain('3 deliveries, 10 attempts: 1 delivered first time, 1 after retries, 1 gave up');
  });
});

describe('hookline sign and verify', () => {
  it('signs the exact bytes of a file and of standard input', async () => {
    const fixture = RAW_FIXTURES.find((f) => f.name === 'trailing-newline')!;
    const dir = await mkdtemp(join(tmpdir(), 'hookline-cli-'));
    const file = join(dir, 'body.json');
    await writeFile(file, fixture.body);
    const [fromFile, fromStdin] = await Promise.all([
      hookline(['sign', '--secret', FIXTURE_SECRET, file]),
      hookline(['sign', '--secret', FIXTURE_SECRET, '-', '--json'], { input: fixture.body }),
    ]);
    expect(fromFile.stdout).toBe(`${fixture.signature}\n`);
    expect(JSON.parse(fromStdin.stdout)).toEqual({ signature: fixture.signature, bytes: Buffer.byteLength(fixture.body) });
  });

  it('verifies, and on a mismatch names the cause it sees', async () => {
    const body = serializeDelivery(createDelivery('message.delivered'));
    const signature = sign(body, secret);
    const [ok, newline] = await Promise.all([
      hookline(['verify', '--secret', secret, '--signature', signature], { input: body }),
      hookline(['verify', '--secret', secret, '--signature', signature], { input: `${body}\n` }),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('✓ signature matches');
    expect(newline.code).toBe(1);
    expect(newline.stdout).toContain('trailing-newline-added: The body ends with a newline');
  });
});

describe('hookline events and help', () => {
  it('lists the catalogue with meanings, as text and JSON', async () => {
    const [text, json] = await Promise.all([hookline(['events']), hookline(['events', '--json'])]);
    expect(text.code).toBe(0);
    for (const entry of EVENT_CATALOGUE) expect(text.stdout).toContain(`${entry.event}`);
    expect(text.stdout).toMatch(/line\.ban_recovered\s+Line returned to a healthy state after a suspected ban\./);
    expect(JSON.parse(json.stdout)).toHaveLength(29);
  });

  it('prints a command help with exit code 0', async () => {
    const run = await hookline(['simulate', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: hookline simulate');
  });
});
