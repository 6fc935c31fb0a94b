import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HOOKLINE_COMMAND } from './hookline-process.test-support';
import type { CliIo } from './io';
import { run } from './run';

// The README's loop: `hookline emulator` as a real process, then `hookline webhooks create` and
// `hookline trigger` against it, with a hookline receiver verifying the delivery.
const API_KEY = 'sk_sandbox_cli_loop';

let child: ChildProcessWithoutNullStreams;
let lines: AsyncIterator<string>;
let baseUrl: string;
let server: Server;
let receiverUrl: string;
let secret = '';
const handled: string[] = [];

async function hookline(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    stdin: (async function* () {})(),
    env: { NO_COLOR: '1', SERVICE_API_KEY: API_KEY, SERVICE_BASE_URL: baseUrl },
  };
  return { code: await run(argv, io), stdout, stderr };
}

async function nextJsonLine(): Promise<Record<string, unknown>> {
  const { value, done } = await lines.next();
  if (done) throw new Error('hookline emulator ended early');
  return JSON.parse(value);
}

beforeAll(async () => {
  child = spawn(
    process.execPath,
    [...HOOKLINE_COMMAND, 'emulator', '--port', '0', '--api-key', API_KEY, '--allow-host', 'emulator.test', '--json'],
    {
      env: { ...process.env, NO_COLOR: '1' },
    },
  );
  lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const listening = await nextJsonLine();
  expect(listening).toMatchObject({ type: 'listening', apiKey: API_KEY, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
  expect(listening.inspectorUrl).toBe(`${listening.url}/`);
  baseUrl = String(listening.url);

  const receiver = createReceiver({ secret: () => secret });
  receiver.on('message.delivered', ({ deliveryId }) => void handled.push(deliveryId));
  server = createServer(createNodeHandler(receiver, { path: '/webhooks' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
});

afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('emulator → webhooks create → trigger → deliveries → replay (a duplicate), then Ctrl-C exits 0', async () => {
  const created = await hookline(['webhooks', 'create', '--url', receiverUrl, '--events', 'message.delivered']);
  expect(created.code).toBe(0);
  secret = /^signingSecret: (\S+)$/m.exec(created.stdout)![1]!;
  const webhookId = /Created webhook (\S+)/.exec(created.stdout)![1]!;

  const triggered = await hookline(['trigger', 'message.delivered']);
  expect(triggered.code).toBe(0);
  const deliveryId = /(wdl_\w+) → /.exec(triggered.stdout)![1]!;
  expect(triggered.stdout).toMatch(new RegExp(`${deliveryId} → ${webhookId}: 200 succeeded in \\d+\\.\\d ms`));
  expect(handled).toEqual([deliveryId]);
  expect(await nextJsonLine()).toMatchObject({
    type: 'attempt',
    deliveryId,
    webhookId,
    attempt: 1,
    status: 'succeeded',
    responseCode: 200,
  });

  const attempts = await hookline(['webhooks', 'deliveries', webhookId]);
  expect(attempts.stdout).toMatch(/^delivery\s+event\s+try\s+trigger\s+status\s+code\s+latency\s+at$/m);
  expect(attempts.stdout).toMatch(
    new RegExp(`^${deliveryId}\\s+message\\.delivered\\s+1\\s+schedule\\s+succeeded\\s+200\\s+\\d+\\.\\d ms`, 'm'),
  );

  const replayed = await hookline(['webhooks', 'replay', webhookId, deliveryId]);
  expect(replayed.code).toBe(0);
  expect(replayed.stdout).toMatch(
    new RegExp(`^Replayed ${deliveryId}: 200 succeeded in \\d+\\.\\d ms\\n\\{"ok":true,"duplicate":true\\}\\n$`),
  );
  expect(handled).toHaveLength(1);

  // The inspector answers the names given with --allow-host, and refuses any other.
  const statusWithHost = (host: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(`${baseUrl}/inspector/state`, { headers: { host }, timeout: 10_000 }, (res) => resolve(res.resume().statusCode!));
      req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
      req.on('error', reject);
      req.end();
    });
  expect(await statusWithHost('emulator.test')).toBe(200);
  expect(await statusWithHost('attacker.example:4010')).toBe(421);

  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  expect(await exited).toBe(0);
});

it('refuses an --allow-host that is not a host name, before listening', async () => {
  const refused = await hookline(['emulator', '--port', '0', '--allow-host', 'https://tunnel.example']);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(
    '--allow-host takes a host name with an optional port (tunnel.example, emulator:4010), got "https://tunnel.example"',
  );
});
